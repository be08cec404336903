/**
 * Requests a run does not make because it already knows their answer. The API's rate
 * bounds every sync, so a request that cannot bring data is time the user waits for.
 *
 * - prompt/products: whether products are supported is the platform's (spec 2.8), the same for
 *   every execution of a platform task. Once one execution answers `unsupported`, the run stores
 *   the task's other executions from that answer (cards none, total 0, the same `supported`,
 *   `result_status`, `field_order` and `field_labels`) without asking. The executions of a unit
 *   are read at once, so the first ask of a platform task goes alone and the task's others wait
 *   for its answer (supported: they ask, in parallel; it failed: they ask). Per run (a distributed
 *   worker's job is a run): the next run asks once again, so a platform that starts supporting
 *   products is seen then.
 * - prompt/screenshot: an execution listed without a `screenshot_url` (null or empty) has none;
 *   a read would store no screenshot row, and the listed item changes when one is taken (change
 *   detection then reads it). So it is stored as having none, without asking.
 *
 * `verify` uses none of this: it reads every child and so checks these assumptions too.
 */
import type { PromptResultItem } from '../api/schemas/hierarchical.ts';
import type { ProductsResult } from './port.ts';

/** Requests not made, by child (the run's counters hold them). */
export interface NotAsked {
  products: number;
  screenshots: number;
}

/** A complete answer that the platform does not support product cards. */
export function isUnsupportedAnswer(p: ProductsResult): boolean {
  return (
    p.supported !== true &&
    (p.supported === false || p.result_status === 'unsupported') &&
    p.cards.length === 0 &&
    p.total === 0
  );
}

/** Whether the listed item names a screenshot: an empty URL is none, as prompt/screenshot's is. */
export function namesScreenshot(item: Pick<PromptResultItem, 'screenshot_url'>): boolean {
  return typeof item.screenshot_url === 'string' && item.screenshot_url !== '';
}

/** An execution's products as the run got them: asked, or known from the platform task. */
export interface ProductsAnswer {
  products: ProductsResult;
  asked: boolean;
}

export class ReadShortcuts {
  /** The first `unsupported` answer per platform task (task_id) this run. */
  readonly #unsupported = new Map<number, ProductsResult>();
  /** Per platform task, its first ask: settled once its answer is in (whatever it was). */
  readonly #firstAsks = new Map<number, Promise<void>>();

  constructor(readonly notAsked: NotAsked = { products: 0, screenshots: 0 }) {}

  /**
   * The products of an execution of platform task `task_id`: `ask` reads them (it answers
   * whatever a read stores, a 404 included), unless the task answered `unsupported` this run.
   * Decided synchronously, so of executions started together only the first asks at once.
   */
  products(task_id: number, ask: () => Promise<ProductsResult>): Promise<ProductsAnswer> {
    // Any answer that says unsupported is kept (the first ask may have failed).
    const asking = (): Promise<ProductsAnswer> =>
      ask().then((products) => {
        if (!this.#unsupported.has(task_id) && isUnsupportedAnswer(products))
          this.#unsupported.set(task_id, products);
        return { products, asked: true };
      });
    const known = this.#known(task_id);
    if (known) return Promise.resolve(known);
    const first = this.#firstAsks.get(task_id);
    if (first) return first.then(() => this.#known(task_id) ?? asking());
    const answer = asking();
    this.#firstAsks.set(
      task_id,
      answer.then(
        () => undefined,
        () => undefined,
      ),
    );
    return answer;
  }

  /** Whether to ask prompt/screenshot for this listed item (counted when not). */
  asksScreenshot(item: Pick<PromptResultItem, 'screenshot_url'>): boolean {
    if (namesScreenshot(item)) return true;
    this.notAsked.screenshots++;
    return false;
  }

  #known(task_id: number): ProductsAnswer | undefined {
    const known = this.#unsupported.get(task_id);
    if (!known) return undefined;
    this.notAsked.products++;
    return { products: { ...known, cards: [] }, asked: false };
  }
}
