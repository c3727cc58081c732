// What kube-apiserver accepts as a label, in its own words: apimachinery's IsLabelKey (formerly
// IsQualifiedName), IsLabelValue and IsDNS1123Subdomain (k8s.io/apimachinery/pkg/api/validate/
// content), and ValidateLabels, which names a refused label under `metadata.labels`. The one home
// of these rules: a record's labels (validateRecord, so every store's door), a ServiceCIDR's
// (createServiceCIDR) and the keys and values of a label selector are all checked here. A DNS
// subdomain is kept here too, as a key's prefix; an owner's group and a ServiceCIDR's name are
// one as well.
//
//   key    = [prefix "/"] name      prefix: a DNS-1123 subdomain, at most 253 characters
//                                   name:   1 to 63 characters, alphanumeric at both ends,
//                                           '-', '_' or '.' between
//   value  = "" | 1 to 63 characters, as a key's name
import { quoteInput, quoteText } from './quote.ts';

/** A DNS-1123 subdomain: dot-separated lower-case alphanumeric labels, '-' inside a label. */
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_SUBDOMAIN_MAX = 253;
/** apimachinery's dns1123SubdomainErrorMsg. */
const DNS1123_SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

/** A key's name part, or a non-empty value. */
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_NAME_MAX = 63;
/** apimachinery's labelKeyErrMsg and labelValueErrMsg. */
const KEY_NAME_MESSAGE = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const VALUE_MESSAGE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** Upstream IsDNS1123Subdomain, as a yes or no: non-empty, at most 253 characters, the pattern above. @internal */
export function isDNS1123Subdomain(text: string): boolean {
  return text.length <= DNS1123_SUBDOMAIN_MAX && DNS1123_SUBDOMAIN.test(text);
}

/**
 * Why kube-apiserver refuses `text` as a DNS-1123 subdomain (upstream IsDNS1123Subdomain's list:
 * the length first, then the characters, both when both are wrong); empty when it takes it.
 * @internal
 */
export function dns1123SubdomainProblems(text: string): string[] {
  const out: string[] = [];
  if (text.length > DNS1123_SUBDOMAIN_MAX) out.push(`must be no more than ${DNS1123_SUBDOMAIN_MAX} characters`);
  if (!DNS1123_SUBDOMAIN.test(text)) out.push(DNS1123_SUBDOMAIN_MESSAGE);
  return out;
}

/** Why kube-apiserver refuses `key` as a label key (upstream IsLabelKey's list); empty when it takes it. @internal */
export function labelKeyProblems(key: string): string[] {
  const parts = key.split('/');
  if (parts.length > 2) {
    return [`a valid label key ${KEY_NAME_MESSAGE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  const out: string[] = [];
  const name = parts.at(-1)!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix.length === 0) out.push('prefix part must be non-empty');
    else for (const p of dns1123SubdomainProblems(prefix)) out.push(`prefix part ${p}`);
  }
  if (name.length === 0) out.push('name part must be non-empty');
  else if (name.length > LABEL_NAME_MAX) out.push(`name part must be no more than ${LABEL_NAME_MAX} characters`);
  if (!LABEL_NAME.test(name)) out.push(`name part ${KEY_NAME_MESSAGE}`);
  return out;
}

/** Why kube-apiserver refuses `value` as a label value (upstream IsLabelValue's list); empty when it takes it. @internal */
export function labelValueProblems(value: string): string[] {
  if (value === '') return [];
  const out: string[] = [];
  if (value.length > LABEL_NAME_MAX) out.push(`must be no more than ${LABEL_NAME_MAX} characters`);
  if (!LABEL_NAME.test(value)) out.push(VALUE_MESSAGE);
  return out;
}

/**
 * kube-apiserver's refusals of one label of an object (ValidateLabels), each a line as the API
 * server writes it: `metadata.labels: Invalid value: "bad key!": name part must consist of …`;
 * empty when it takes the label. A refused value is named under its key
 * (`metadata.labels["team"]: …`), where upstream writes `metadata.labels` alone: the key says
 * which label to fix.
 * @internal
 */
export function labelProblems(key: string, value: string): string[] {
  const out: string[] = [];
  for (const p of labelKeyProblems(key)) out.push(`metadata.labels: Invalid value: ${quoteInput(key)}: ${p}`);
  for (const p of labelValueProblems(value)) out.push(`metadata.labels[${quoteText(key)}]: Invalid value: ${quoteInput(value)}: ${p}`);
  return out;
}
