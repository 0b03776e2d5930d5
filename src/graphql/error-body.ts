/*
 * The body of a GraphQL request that could not run at all (401, 400 before execution, 405, 413, 503):
 * `data: null` and one error with a code a client can branch on. One builder for every such answer.
 */
export function graphqlErrorBody (message: string, code: string): { data: null, errors: Array<{ message: string, extensions: { code: string } }> } {
  return { data: null, errors: [{ message, extensions: { code } }] }
}
