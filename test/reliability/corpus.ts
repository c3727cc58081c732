// The bad-input corpus: what JavaScript callers can hand the public entry points. Each entry is
// [label, value]; the label names the row in the test output.

const LONG = 10_240;

/** Malformed or ambiguous address text, and non-strings. Every entry point must reject these. */
export const BAD_ADDRESSES: readonly (readonly [string, unknown])[] = [
  // IPv4 look-alikes other parsers accept
  ['leading zero (octal in inet_aton)', '010.1.2.5'],
  ['leading zero in the last octet', '10.1.2.05'],
  ['all-zero padded octets', '010.001.002.005'],
  ['hex octet', '0x0a.1.2.5'],
  ['hex whole address', '0x0a010205'],
  ['short IPv4 (3 parts)', '10.1.5'],
  ['short IPv4 (2 parts)', '10.261'],
  ['single integer', '167838213'],
  ['octet > 255', '10.1.2.256'],
  ['negative octet', '10.1.2.-5'],
  ['plus sign', '+10.1.2.5'],
  ['five octets', '10.1.2.5.6'],
  ['trailing dot', '10.1.2.5.'],
  ['leading dot', '.10.1.2.5'],
  ['empty octet', '10..2.5'],
  ['exponent', '1e1.1.2.5'],
  ['fullwidth digits', '１０.１.２.５'],
  ['arabic-indic digits', '١٠.١.٢.٥'],
  ['port suffix', '10.1.2.5:80'],
  ['prefix instead of address', '10.1.2.5/32'],
  // whitespace, control characters, NUL
  ['leading space', ' 10.1.2.5'],
  ['trailing space', '10.1.2.5 '],
  ['trailing newline', '10.1.2.5\n'],
  ['tab inside', '10.1.\t2.5'],
  ['embedded NUL', '10.1.2.5\u0000'],
  ['NUL in the middle', '10.1\u0000.2.5'],
  ['zero-width space', '10.1.2.5\u200b'],
  ['BOM prefix', '\ufeff10.1.2.5'],
  ['only spaces', '   '],
  ['empty string', ''],
  // IPv6 forms
  ['zone', 'fd00:1::5%eth0'],
  ['numeric zone', 'fe80::1%1'],
  ['brackets', '[fd00:1::5]'],
  ['brackets with port', '[fd00:1::5]:443'],
  ['two ellipses', 'fd00::1::5'],
  ['nine groups', '1:2:3:4:5:6:7:8:9'],
  ['group of 5 hex digits', 'fd00:00001::5'],
  ['non-hex group', 'fd00:g::5'],
  ['triple colon', 'fd00:::5'],
  ['single leading colon', ':fd00::5'],
  ['single trailing colon', 'fd00::5:'],
  ['lone colon', ':'],
  ['embedded IPv4 not at the end', '::1.2.3.4:5'],
  ['embedded IPv4 with leading zero', '::ffff:10.01.2.5'],
  ['embedded short IPv4', '::ffff:10.1.2'],
  ['too many groups before embedded IPv4', '1:2:3:4:5:6:7:1.2.3.4'],
  [':: expanding to nothing', '1:2:3:4::5:6:7:8'],
  ['IPv6 prefix instead of address', 'fd00:1::5/128'],
  ['URL', 'http://10.1.2.5/'],
  ['hostname', 'localhost'],
  ['word', 'invalid-ip-address'],
  // huge strings
  ['10 kB of digits', '1'.repeat(LONG)],
  ['10 kB of x', 'x'.repeat(LONG)],
  ['valid address + 10 kB of spaces', `10.1.2.5${' '.repeat(LONG)}`],
  ['10 kB of colons', ':'.repeat(LONG)],
  // non-strings (JavaScript callers)
  ['null', null],
  ['undefined', undefined],
  ['number (the address as u32)', 167838213],
  ['number 0', 0],
  ['NaN', NaN],
  ['Infinity', Infinity],
  ['bigint', 167838213n],
  ['boolean', true],
  ['empty object', {}],
  ['object with toString', { toString: () => '10.1.2.5' }],
  ['String object', new String('10.1.2.5')],
  ['array of the address', ['10.1.2.5']],
  ['bytes', new Uint8Array([10, 1, 2, 5])],
  ['Date', new Date(0)],
  ['function', () => '10.1.2.5'],
  ['symbol', Symbol('10.1.2.5')],
];

/** Malformed CIDR text and non-strings: every constructor must reject these with InvalidCIDRError. */
export const BAD_CIDRS: readonly (readonly [string, unknown])[] = [
  ['no slash', '10.1.2.0'],
  ['empty', ''],
  ['slash only', '/24'],
  ['empty bits', '10.1.2.0/'],
  ['bits > 32', '10.1.2.0/33'],
  ['bits > 128', 'fd00::/129'],
  ['huge bits', '10.1.2.0/4294967320'],
  ['negative bits', '10.1.2.0/-1'],
  ['leading zero in bits', '10.1.2.0/024'],
  ['plus bits', '10.1.2.0/+24'],
  ['space before slash', '10.1.2.0 /24'],
  ['space after bits', '10.1.2.0/24 '],
  ['netmask form', '10.1.2.0/255.255.255.0'],
  ['hex bits', '10.1.2.0/0x18'],
  ['fractional bits', '10.1.2.0/24.5'],
  ['two slashes', '10.1.2.0/24/24'],
  ['octal address', '010.1.2.0/24'],
  ['short address', '10.1.2/24'],
  ['zone', 'fe80::%eth0/64'],
  ['brackets', '[fd00::]/64'],
  ['IPv4-mapped prefix (ambiguous)', '::ffff:10.1.2.0/120'],
  ['embedded NUL', '10.1.2.0/24\u0000'],
  ['10 kB', `10.1.2.0/${'2'.repeat(LONG)}`],
  ['null', null],
  ['undefined', undefined],
  ['number', 24],
  ['bigint', 24n],
  ['object', { cidr: '10.1.2.0/24' }],
  ['array', ['10.1.2.0/24']],
];

const SHORTEST = 'shortest allowed prefix length for service CIDR is 64';
const NO_FIRST = 'invalid address []';
const MAPPED = 'overlaps the IPv4-mapped block ::ffff:0:0/96';

/**
 * Well-formed CIDRs an allocator cannot serve (InvalidRangeError): [label, cidr, what the
 * allocators' message says, what Range does]. Range has no /64 limit, but refuses the
 * IPv4-mapped block too, with the MAPPED message.
 */
export const UNSERVABLE_CIDRS: readonly (readonly [string, string, string, 'range-accepts' | 'range-rejects'])[] = [
  ['IPv6 /63', '2001:db8::/63', SHORTEST, 'range-accepts'],
  ['IPv6 /48', '2001:db8::/48', SHORTEST, 'range-accepts'],
  ['IPv6 /0 (also covers the IPv4-mapped block)', '::/0', SHORTEST, 'range-rejects'],
  ['255.255.255.255/32', '255.255.255.255/32', NO_FIRST, 'range-accepts'],
  ['all-ones /128', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128', NO_FIRST, 'range-accepts'],
  ['::/64 covers the IPv4-mapped block', '::/64', MAPPED, 'range-rejects'],
  ['::/80 covers the IPv4-mapped block', '::/80', MAPPED, 'range-rejects'],
  ['::fffe:0:0/95 covers the IPv4-mapped block', '::fffe:0:0/95', MAPPED, 'range-rejects'],
  ['::1:0:0:0/64 (host bits set) masks to ::/64', '::1:0:0:0/64', MAPPED, 'range-rejects'],
];

export const IPV4_MAPPED_MESSAGE = MAPPED;

/** allocateMany counts: [label, value, expected class]. */
export const BAD_COUNTS: readonly (readonly [string, unknown, 'InvalidArgumentError' | 'ErrFull' | 'ok'])[] = [
  ['negative', -1, 'InvalidArgumentError'],
  ['-0 is 0: accepted, returns [] and reserves nothing', -0, 'ok'],
  ['fractional', 1.5, 'InvalidArgumentError'],
  ['NaN', NaN, 'InvalidArgumentError'],
  ['Infinity', Infinity, 'InvalidArgumentError'],
  ['-Infinity', -Infinity, 'InvalidArgumentError'],
  ['2^53 (an integer: more than free)', 2 ** 53, 'ErrFull'],
  ['1e308 (an integer: more than free)', 1e308, 'ErrFull'],
  ['numeric string', '3', 'InvalidArgumentError'],
  ['bigint', 3n, 'InvalidArgumentError'],
  ['null', null, 'InvalidArgumentError'],
  ['undefined', undefined, 'InvalidArgumentError'],
  ['object', {}, 'InvalidArgumentError'],
  ['boolean', true, 'InvalidArgumentError'],
  ['MAX_SAFE_INTEGER (more than free)', Number.MAX_SAFE_INTEGER, 'ErrFull'],
  ['free + 1', 'free+1', 'ErrFull'],
];

/** forEach callbacks that are not functions. */
export const BAD_CALLBACKS: readonly (readonly [string, unknown])[] = [
  ['null', null],
  ['undefined', undefined],
  ['number', 42],
  ['string', 'console.log'],
  ['object', {}],
  ['array', [() => {}]],
  ['bigint', 1n],
  ['symbol', Symbol('fn')],
];
