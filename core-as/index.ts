// The WebAssembly core of ipallocator: every export is listed here. The host side of each one is
// typed in adapters/wasm.ts, the only module that touches the instance.
export { scratch_ptr } from './scratch';
export {
  heap_set_limit_pages, heap_limit_pages, heap_bytes_in_use, heap_small_bytes_free, heap_validate, buf_alloc, buf_free,
  heap_failed_bytes, heap_failed_reason, heap_bytes_free, heap_failures, heap_failed_block, heap_failed_largest,
  heap_failed_small_free,
} from './heap';
// 128-bit address math, prefix geometry, iterator
export { u128_add, u128_sub, u128_cmp, u128_next, u128_prev } from './u128';
export { prefix_geometry, prefix_hosts, prefix_range_offset } from './prefix';
export { iter_start, iter_step } from './iter';
export {
  index_new, index_kind, index_free, index_set, index_clear, index_has, index_count,
  index_next_free, index_take_free, index_next_set, index_bytes, index_validate, index_set_many, index_select_free,
  index_count_free, index_compact,
} from './freeindex';
// sparse index extras: how its singles nodes are laid out (for tests), what a load may grow it by
export { sparse_singles_node, sparse_growth_bound, sparse_free_for_nodes } from './sparse';
// dense index extras (snapshot/restore)
export { dense_words_ptr, dense_word_count, dense_rebuild, dense_next_free32, dense_take_free32 } from './dense';
// a range's address space: index + geometry, one boundary crossing per hot-path operation
export {
  space_new, space_free, space_index, space_take, space_take_after, space_set, space_clear, space_has,
  space_offset, space_address, space_set_many,
} from './space';
// Constants the host must agree on, as immutable globals: adapters/wasm.ts reads each once when it
// instantiates the module, so the TypeScript side never repeats a number of the core.
export { OK, NONE, OUT_OF_RANGE, OUT_OF_MEMORY, TOO_FAR } from './status';
export { HEAP_FAIL_LIMIT, HEAP_FAIL_FRAGMENTED, HEAP_FAIL_HOST } from './heap';
export { KIND_AUTO, KIND_DENSE, KIND_SPARSE, DENSE_MAX_SLOTS, DENSE_MAX_OFFSETS } from './freeindex';
export { BAND_UPPER, BAND_LOWER } from './space';
export { SCRATCH_WORDS } from './scratch';
export {
  GEO_NETWORK, GEO_BROADCAST, GEO_FIRST, GEO_LAST, GEO_OFFSET_ADDRESS, GEO_SIZE, GEO_RANGE_OFFSET,
  GEO_FLAGS, GEO_COUNT, FLAG_NO_FIRST, FLAG_NO_LAST, FLAG_COUNT_SATURATED,
} from './prefix';
