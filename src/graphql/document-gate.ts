import { GraphQLError, Lexer, Location, Source, TokenKind, parse, type DocumentNode } from 'graphql'
import { QUERY_DEPTH_LIMIT } from './limits.js'

/*
 * The only way a document enters /v2/graphql: GraphQL source text, bounded before anything recursive
 * touches it. A first pass with graphql's own lexer (a loop, no recursion) counts tokens and bracket
 * nesting, so a 5,000-level document or a 1 MB swarm of tokens is refused in linear time before the
 * recursive-descent parser and the validation rules ever see it. Only then is the text parsed.
 *
 * Mercurius would take a `query` that does not parse as GraphQL for a JSON-encoded AST (JSON.parse in
 * its fallback), whose names nobody checks. Text that passes this gate parses, so that fallback is never
 * reached; `assertParsed` checks it again where Mercurius hands us the document it validates.
 */

/**
 * Tokens per document. The standard introspection query is about 300 tokens, the full orders query
 * about 250; 5,000 leaves room for any real client document while keeping the worst case of graphql's
 * validation rules (some compare fields pairwise) in the low milliseconds.
 */
export const MAX_TOKENS = 5_000

/**
 * Brackets of any kind ({ [ () nested inside each other. A valid document never needs more than the
 * query depth limit plus a few for arguments; anything deeper is refused before it can recurse.
 */
export const MAX_NESTING = QUERY_DEPTH_LIMIT + 15

export type GateCode = 'GRAPHQL_PARSE_FAILED' | 'QUERY_TOO_DEEP' | 'QUERY_TOO_COMPLEX'

/**
 * A request refused before it ran (by the gate here, by validation or variable coercion in admission.ts):
 * its request-level GraphQL errors, each coded where it was raised.
 */
export class DocumentRejected extends Error {
  override name = 'DocumentRejected'
  constructor (readonly errors: readonly GraphQLError[]) {
    super(errors[0]?.message ?? 'Document rejected')
  }
}

function rejected (message: string, code: GateCode, source?: Source, position?: number): DocumentRejected {
  return new DocumentRejected([new GraphQLError(message, {
    ...(source && position !== undefined ? { source, positions: [position] } : {}),
    extensions: { code }
  })])
}

/** Counts tokens and nesting with the lexer alone; throws DocumentRejected on the first bound crossed. */
function scan (source: Source): void {
  const lexer = new Lexer(source)
  let tokens = 0
  let nesting = 0
  for (;;) {
    let token
    try {
      token = lexer.advance()
    } catch (err) {
      throw new DocumentRejected([parseFailed(err)])
    }
    if (token.kind === TokenKind.EOF) return
    if (++tokens > MAX_TOKENS) {
      throw rejected(`The document has more than ${MAX_TOKENS} tokens: split it into smaller queries`, 'QUERY_TOO_COMPLEX')
    }
    if (token.kind === TokenKind.BRACE_L || token.kind === TokenKind.BRACKET_L || token.kind === TokenKind.PAREN_L) {
      if (++nesting > MAX_NESTING) {
        throw rejected(
          `The document nests brackets more than ${MAX_NESTING} levels deep; queries may be at most ${QUERY_DEPTH_LIMIT} levels deep`,
          'QUERY_TOO_DEEP', source, token.start)
      }
    } else if (
      token.kind === TokenKind.BRACE_R || token.kind === TokenKind.BRACKET_R || token.kind === TokenKind.PAREN_R
    ) {
      nesting--
    }
  }
}

/** Whatever the lexer or the parser threw: the text is not a GraphQL document. */
function parseFailed (err: unknown): GraphQLError {
  const extensions = { code: 'GRAPHQL_PARSE_FAILED' }
  if (err instanceof GraphQLError) {
    return new GraphQLError(err.message, { source: err.source, positions: err.positions, extensions })
  }
  return new GraphQLError('Syntax Error: the document could not be read', { extensions })
}

/** Parses GraphQL source text that passed the bounds; throws DocumentRejected otherwise. */
export function parseDocument (text: string): DocumentNode {
  const source = new Source(text, 'request')
  scan(source)
  try {
    return parse(source, { maxTokens: MAX_TOKENS })
  } catch (err) {
    throw new DocumentRejected([parseFailed(err)])
  }
}

/**
 * Defence in depth where Mercurius hands over the document it is about to validate and run: only
 * graphql's parser makes Location objects, so a document built any other way (a JSON-encoded AST) is
 * refused even if some path ever skipped the gate.
 */
export function assertParsed (document: DocumentNode): void {
  if (!(document.loc instanceof Location)) {
    throw rejected('Only GraphQL source text is accepted as a query', 'GRAPHQL_PARSE_FAILED')
  }
}
