import path from 'node:path'
import ts from 'typescript'

/*
 * How a text written as a function of its values (`(from, to) => \`Cannot change … from ${from} to ${to}\``)
 * is shown in a reference table: each value as `{name}`, the parameter's own name. A parameter of a closed
 * set of values (a union of string literals, a boolean) that the text does more with than write it out (a
 * ternary, a lookup) gives one text per value. A text that cannot be written with placeholders (it computes
 * with a value) is shown once with example values, and says which.
 *
 * The parameters' names and types come from the source (the TypeScript checker on the texts files alone,
 * imports unresolved: a type from another file counts as open, which only costs the variants).
 */

export interface Parameter {
  name: string
  /** Every value of a closed type (string literals, booleans); undefined for an open one. */
  values?: ReadonlyArray<string | boolean>
  numeric: boolean
}

export interface Shape {
  /** The text, or each distinct text of the closed values, with `{name}` for every open value. */
  texts: string[]
  /** Set when the text was written with example values instead: which. */
  example?: string
}

/** A value that writes itself as `{name}` wherever the text puts it, whatever string method reads it. */
class Placeholder extends String {
  override toString (): string { return super.toString() }
}

/** The parameters of each function in the texts tables of some files, found by table and key. */
export class TextSources {
  private readonly program: ts.Program
  private readonly checker: ts.TypeChecker

  /** `files`: paths from `root`, the repository's. */
  constructor (private readonly root: string, files: readonly string[]) {
    this.program = ts.createProgram(files.map((f) => path.join(root, f)), {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2023.d.ts'],
      types: [],
      strict: true,
      noResolve: true,
      noEmit: true
    })
    this.checker = this.program.getTypeChecker()
  }

  /** The parameters of `table[key]`'s text (a function as the value, or as the text of a [code, text] entry). */
  parameters (file: string, table: string, key: string): Parameter[] {
    const source = this.program.getSourceFile(path.join(this.root, file))
    if (source === undefined) throw new Error(`${file} is not among the texts files read`)
    const entries = tableObject(source, table)
    if (entries === undefined) throw new Error(`${file}: no table ${table} written as an object literal`)
    const property = entries.properties.find((p): p is ts.PropertyAssignment =>
      ts.isPropertyAssignment(p) && propertyName(p.name) === key)
    if (property === undefined) throw new Error(`${file}: ${table} has no entry ${key}`)
    let value = unwrap(property.initializer)
    if (ts.isArrayLiteralExpression(value)) value = unwrap(value.elements[1] ?? value)
    if (!ts.isArrowFunction(value) && !ts.isFunctionExpression(value)) return []
    return value.parameters.map((p) => this.parameter(p))
  }

  private parameter (node: ts.ParameterDeclaration): Parameter {
    const type = this.checker.getTypeAtLocation(node)
    const members = type.isUnion() ? type.types : [type]
    const literal = (t: ts.Type): string | boolean | undefined => {
      if (t.isStringLiteral()) return t.value
      if ((t.flags & ts.TypeFlags.BooleanLiteral) !== 0) return this.checker.typeToString(t) === 'true'
      return undefined
    }
    const values = members.map(literal)
    return {
      name: node.name.getText(),
      values: values.every((v) => v !== undefined) ? values as Array<string | boolean> : undefined,
      numeric: (type.flags & ts.TypeFlags.NumberLike) !== 0
    }
  }
}

function unwrap (node: ts.Expression): ts.Expression {
  let n = node
  while (ts.isAsExpression(n) || ts.isParenthesizedExpression(n) || ts.isSatisfiesExpression(n)) n = n.expression
  return n
}

function propertyName (name: ts.PropertyName): string | undefined {
  return ts.isIdentifier(name) || ts.isStringLiteral(name) ? name.text : undefined
}

/** The object literal of `export const table = {…}` or `= someTable({…})` (itemErrors). */
function tableObject (source: ts.SourceFile, table: string): ts.ObjectLiteralExpression | undefined {
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue
    for (const declaration of statement.declarationList.declarations) {
      const { name, initializer } = declaration
      if (!ts.isIdentifier(name) || name.text !== table || initializer === undefined) continue
      let init = unwrap(initializer)
      if (ts.isCallExpression(init) && init.arguments[0] !== undefined) init = unwrap(init.arguments[0])
      return ts.isObjectLiteralExpression(init) ? init : undefined
    }
  }
  return undefined
}

/** The text with these arguments, or null when it cannot be written so (it threw, or wrote `undefined`). */
function attempt (write: (args: unknown[]) => string, args: unknown[]): string | null {
  try {
    const text = write(args)
    return /undefined|NaN|\[object /.test(text) ? null : text
  } catch {
    return null
  }
}

/** Every combination of the closed values of `params` at their positions, the others as given. */
type Closed = Array<{ index: number, values: ReadonlyArray<string | boolean> }>

function combinations (base: unknown[], closed: Closed): unknown[][] {
  let all: unknown[][] = [base]
  for (const { index, values } of closed) {
    all = all.flatMap((args) => values.map((v) => args.map((a, i) => i === index ? v : a)))
  }
  return all
}

/** Values that any text takes: a closed parameter's first value, else 100, 200, … (as text where text is expected). */
export function exampleArguments (params: readonly Parameter[]): unknown[] {
  return params.map((p, i) => p.values?.[0] ?? (p.numeric ? 100 * (i + 1) : String(100 * (i + 1))))
}

export function shapeOf (write: (args: unknown[]) => string, params: readonly Parameter[]): Shape {
  const base = params.map((p) => new Placeholder(`{${p.name}}`))
  const plain = attempt(write, base)
  // A closed parameter that is only written out stays a placeholder; one the text branches on varies it.
  const varying = params.flatMap((p, index) => {
    if (p.values === undefined) return []
    const onlyWritten = plain !== null && p.values.every((v) =>
      attempt(write, base.map((a, i) => i === index ? v : a)) === plain.replaceAll(`{${p.name}}`, String(v)))
    return onlyWritten ? [] : [{ index, values: p.values }]
  })
  const texts = combinations(base, varying).map((args) => attempt(write, args))
  if (texts.every((t): t is string => t !== null)) return { texts: [...new Set(texts)] }

  const example = exampleArguments(params)
  const text = attempt(write, example)
  if (text === null) throw new Error(`a text cannot be written even with example values (${example.join(', ')})`)
  return { texts: [text], example: params.map((p, i) => `${p.name} = ${String(example[i])}`).join(', ') }
}
