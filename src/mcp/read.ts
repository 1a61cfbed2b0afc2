/**
 * The gateway's own inputs (the policy document, tool arguments, `_meta`) are read with the
 * occurrences context's strict Reader: each refusal names its path and never echoes the value
 * (which may be a private request), and every string is checked for U+0000 and well-formedness.
 */
export { NAME, Reader as Read } from '../occurrences/index.js';
