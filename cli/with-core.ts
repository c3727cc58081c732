// What the commands use of the WebAssembly core, in one module that main.ts loads (loadCore) once
// a command has read its options: help, the version and usage errors answer without WebAssembly
// (node --jitless), and a command that needs it says, in one line, that it is missing.
export { Prefix } from '../adapters/geometry.ts';
export { Range } from '../adapters/range.ts';
export { findProblems, fix, notFixedSummary, render as renderCheck } from './check.ts';
export { emptyMap, markAllocated } from './map.ts';
export { allocatedAddress, offsetIn, parseAddress, rangesOf, skipReason } from './ranges.ts';
export { onePerName, render as renderStatus, summarize } from './status.ts';
export { renderSVG } from './svg.ts';
