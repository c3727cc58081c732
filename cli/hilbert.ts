// The Hilbert curve: the classic map of address space (xkcd 195, the IPv4 heat maps). Walking the
// cells in address order moves one step to a neighbour each time, so a block of consecutive
// addresses — a subnet — is a compact patch, never a stripe cut in two.
//
// A grid of 2^b cells: b even → one square of side 2^(b/2); b odd → two squares side by side
// (2^((b+1)/2) wide, 2^((b−1)/2) high), the second continuing the first:
//
//   square of side 4 (b = 4)          two squares of side 2 (b = 3)
//    0─ 1  14─15                       0  3─ 4  7
//       │  │                           │  │  │  │
//    3─ 2  13─12                       1─ 2  5─ 6
//    │         │
//    4  7─ 8  11
//    │  │  │   │
//    5─ 6  9─10
//
// The curve starts at the top-left cell (0, 0) and ends at the top-right one (side − 1, 0), so the
// second square starts right beside the end of the first.

/** Width and height, in cells, of the grid of 2^bits cells. */
export function gridSize(bits: number): { width: number; height: number } {
  const half = bits >> 1;
  return { width: 1 << (bits - half), height: 1 << half };
}

/** The cell (x, y) of index d on the curve through 2^bits cells (x to the right, y down). */
export function hilbertCell(bits: number, d: number): { x: number; y: number } {
  const half = bits >> 1;
  const side = 1 << half;
  const perSquare = side * side;
  const square = Math.floor(d / perSquare); // 0, or 1 in the second square of an odd grid
  let t = d - square * perSquare;
  let x = 0;
  let y = 0;
  for (let s = 1; s < side; s *= 2) {
    const rx = 1 & (t >> 1);
    const ry = 1 & (t ^ rx);
    // Rotate the quadrant so the sub-curve enters and leaves where its neighbours are.
    if (ry === 0) {
      if (rx === 1) {
        x = s - 1 - x;
        y = s - 1 - y;
      }
      const swap = x;
      x = y;
      y = swap;
    }
    x += s * rx;
    y += s * ry;
    t >>= 2;
  }
  return { x: x + square * side, y };
}
