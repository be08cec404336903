/**
 * Pulls the next item of an async iterable while the caller is still busy with the current one.
 * The walk uses it on result pages: the next page's request joins the queue before the current
 * page's hundreds of per-execution requests, so the queue never drains between pages.
 */
export async function* prefetch<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  let next = it.next();
  // An error of a prefetched page surfaces when the caller reaches it, not as an unhandled rejection.
  next.catch(() => undefined);
  try {
    for (;;) {
      const r = await next;
      if (r.done) return;
      next = it.next();
      next.catch(() => undefined);
      yield r.value;
    }
  } finally {
    await it.return?.();
  }
}
