/**
 * JSON text of a value of any depth, without recursion: V8's JSON.stringify (and a recursive
 * walk) throws `RangeError: Maximum call stack size exceeded` a few thousand levels down, and an
 * API answer may nest an unknown member that deep. An explicit stack instead of the call stack.
 *
 * The text is JSON.stringify's for every JSON value: members in their order (or sorted by name,
 * for a canonical form), `undefined` members dropped, `undefined` in an array as `null`,
 * primitives as JSON.stringify writes them.
 */

type Frame =
  | { readonly array: readonly unknown[]; i: number }
  | { readonly object: Record<string, unknown>; readonly keys: readonly string[]; i: number };

export function jsonText(value: unknown, opts: { sortKeys?: boolean } = {}): string {
  let out = '';
  const stack: Frame[] = [];
  let next: unknown = value;
  let pending = true;
  for (;;) {
    if (pending) {
      pending = false;
      const v = next;
      if (v === null || typeof v !== 'object') {
        out += JSON.stringify(v) ?? 'null';
      } else if (Array.isArray(v)) {
        out += '[';
        stack.push({ array: v, i: 0 });
      } else {
        const object = v as Record<string, unknown>;
        const keys = Object.keys(object).filter((k) => object[k] !== undefined);
        if (opts.sortKeys) keys.sort();
        out += '{';
        stack.push({ object, keys, i: 0 });
      }
    }
    const top = stack[stack.length - 1];
    if (!top) return out;
    if ('array' in top) {
      if (top.i < top.array.length) {
        if (top.i > 0) out += ',';
        const item = top.array[top.i++];
        next = item === undefined ? null : item;
        pending = true;
      } else {
        out += ']';
        stack.pop();
      }
    } else if (top.i < top.keys.length) {
      if (top.i > 0) out += ',';
      const key = top.keys[top.i++]!;
      out += `${JSON.stringify(key)}:`;
      next = top.object[key];
      pending = true;
    } else {
      out += '}';
      stack.pop();
    }
  }
}

/** JSON.stringify's text: its native speed for the usual value, jsonText's for a very deep one. */
export function jsonStringify(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    return jsonText(value);
  }
}

/**
 * The deepest nesting geo-sync stores in a JSON column: PostgreSQL's JSONB parser recurses and
 * refuses a value some 12,000 levels deep ("stack depth limit exceeded", max_stack_depth 2MB). A
 * record nested deeper is quarantined with that reason (and kept cut at this depth) rather than
 * failing the write of its whole batch. Far above any real answer.
 */
export const MAX_STORED_JSON_DEPTH = 5000;

/** Whether `value` nests containers more than `limit` levels deep (a container is level 1). */
export function jsonDepthExceeds(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

/**
 * A copy of `value` with every container deeper than `limit` levels replaced by a note saying
 * so: what a quarantined record's raw payload can keep of a value too deep to store.
 */
export function cutBelow(value: unknown, limit: number): unknown {
  const note = `[nested deeper than ${limit} levels: not kept]`;
  const copyOf = (v: object): unknown[] | Record<string, unknown> => (Array.isArray(v) ? [] : {});
  if (value === null || typeof value !== 'object') return value;
  if (limit < 1) return note;
  const root = copyOf(value);
  const stack: [object, unknown[] | Record<string, unknown>, number][] = [[value, root, 1]];
  while (stack.length > 0) {
    const [src, dst, depth] = stack.pop()!;
    for (const [k, child] of Object.entries(src)) {
      let out: unknown = child;
      if (child !== null && typeof child === 'object') {
        if (depth + 1 > limit) out = note;
        else {
          out = copyOf(child);
          stack.push([child, out as unknown[] | Record<string, unknown>, depth + 1]);
        }
      }
      Object.defineProperty(dst, Array.isArray(dst) ? Number(k) : k, {
        value: out,
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
  }
  return root;
}

/**
 * Where `value` holds a number that is not finite, as a path of member names and indexes; null
 * when it holds none. JSON has no Infinity, but JSON.parse reads a number too large for a double
 * (`1e400`) as one, and JSON.stringify then writes `null`: a JSON column would store something
 * else than what arrived. Without recursion, as the walks above.
 */
export function nonFiniteNumberAt(value: unknown): (string | number)[] | null {
  // Each node knows its parent's node and its own name there: the path is built only when found.
  interface Node {
    readonly value: unknown;
    readonly parent: Node | null;
    readonly key: string | number;
  }
  const stack: Node[] = [{ value, parent: null, key: '' }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const v = node.value;
    if (typeof v === 'number') {
      if (Number.isFinite(v)) continue;
      const path: (string | number)[] = [];
      for (let n: Node | null = node; n?.parent; n = n.parent) path.unshift(n.key);
      return path;
    }
    if (v === null || typeof v !== 'object') continue;
    const entries: [string | number, unknown][] = Array.isArray(v)
      ? v.map((x: unknown, i) => [i, x])
      : Object.entries(v);
    // Pushed last first, so the first one in document order is found first.
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      if (typeof child === 'number' || (child !== null && typeof child === 'object'))
        stack.push({ value: child, parent: node, key });
    }
  }
  return null;
}
