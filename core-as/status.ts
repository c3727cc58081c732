// Status codes returned across the boundary. The core never throws: it returns one of these and
// the TypeScript layer (adapters/) turns the failures into typed errors.

/** Done / found / newly changed. */
export const OK: i32 = 1;
/** Nothing to report: not found, already in that state, iterator exhausted, add overflowed. */
export const NONE: i32 = 0;
/** An offset or address outside the structure's domain. */
export const OUT_OF_RANGE: i32 = -1;
/** Linear memory could not grow (host refused, or the cap set by heap_set_limit_pages). */
export const OUT_OF_MEMORY: i32 = -2;
/** A difference that does not fit in 64 bits. */
export const TOO_FAR: i32 = -3;
