// Small helpers shared by the test files.

/** The value a promise rejects with; fails the test when it resolves instead. */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}
