/**
 * The credentials of one client: an API key, an existing token, or an e-mail and password that
 * are exchanged for a token by logging in (lazily, on the first request that needs one).
 *
 * Secrets live in private (`#`) fields only: they are not enumerable, so no `JSON.stringify`,
 * `util.inspect`, log serializer or spread of this object can reveal them. The login token is
 * kept in memory and never written anywhere. `scrub` removes every known secret from text that
 * came back from the server before it is put into an error message.
 */
import { REDACTED, SECRET_FIELD, scrubWith } from '../redact.ts';

export type AuthOptions = { apiKey: string } | { email: string; password: string } | { token: string };

export class Credentials {
  /** How the client authenticates: `api-key`, `token` or `login`. Not a secret. */
  readonly kind: 'api-key' | 'token' | 'login';
  /** The API key or the token given in the options. */
  #configured: string | undefined;
  /** The token of a login, until logout revokes it. */
  #loginToken: string | undefined;
  #email: string | undefined;
  #password: string | undefined;
  /** The login in progress, shared by every request that needs a token meanwhile. */
  #loggingIn: Promise<void> | undefined;
  /** Every secret this client has known, kept so a revoked token is still scrubbed. */
  #secrets = new Set<string>();

  constructor(auth: AuthOptions) {
    if ('apiKey' in auth) {
      this.kind = 'api-key';
      this.#configured = requireText(auth.apiKey, 'auth.apiKey');
    } else if ('token' in auth) {
      this.kind = 'token';
      this.#configured = requireText(auth.token, 'auth.token');
    } else {
      this.kind = 'login';
      this.#email = requireText(auth.email, 'auth.email');
      this.#password = requireText(auth.password, 'auth.password');
      this.#secrets.add(this.#password);
    }
    if (this.#configured) this.#secrets.add(this.#configured);
  }

  /** Whether a bearer is in hand (a key, a given token, or a login token not yet revoked). */
  get hasBearer(): boolean {
    return (this.#loginToken ?? this.#configured) !== undefined;
  }

  /** The configured e-mail and password, for `login()`; undefined unless auth is by login. */
  loginBody(): { email: string; password: string } | undefined {
    return this.#email !== undefined && this.#password !== undefined
      ? { email: this.#email, password: this.#password }
      : undefined;
  }

  /** The bearer in hand (a login token, else the configured key or token), or undefined. */
  get currentBearer(): string | undefined {
    return this.#loginToken ?? this.#configured;
  }

  /**
   * The bearer for the next request: a login token, else the configured key or token. With
   * login auth and no token yet, runs `login` first, once: concurrent callers share that login.
   */
  async bearer(login: () => Promise<void>): Promise<string> {
    if (!this.hasBearer && this.kind === 'login') {
      this.#loggingIn ??= login().finally(() => {
        this.#loggingIn = undefined;
      });
      await this.#loggingIn;
    }
    const b = this.#loginToken ?? this.#configured;
    if (b === undefined) throw new Error('no credentials left: the token was revoked by logout()');
    return b;
  }

  /** Keeps the token a login returned (in memory only). */
  setLoginToken(token: string, password?: string): void {
    this.#loginToken = token;
    this.#secrets.add(token);
    if (password) this.#secrets.add(password);
  }

  /**
   * Forgets what logout revoked: the login token if there is one, else a configured token. An API
   * key is not revoked by logout (spec 5.4: deleting it does), so it stays.
   */
  forgetRevoked(): void {
    if (this.#loginToken !== undefined) this.#loginToken = undefined;
    else if (this.kind === 'token') this.#configured = undefined;
  }

  /** Every secret known, for registering with the log scrubber. */
  secrets(): string[] {
    return [...this.#secrets];
  }

  /** `text` with every known secret replaced by `[REDACTED]`. */
  scrub(text: string): string {
    return scrubWith(text, this.#secrets);
  }

  /**
   * A copy of a payload safe to keep on an error: fields named like secrets are replaced (a login
   * answer that failed validation still holds its token), and so is any known secret value.
   */
  redact(raw: unknown, depth = 0): unknown {
    if (typeof raw === 'string') return this.scrub(raw);
    if (raw === null || typeof raw !== 'object' || depth > 20) return raw;
    if (Array.isArray(raw)) return raw.map((v) => this.redact(v, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(raw)) {
      out[k] = SECRET_FIELD.test(k) ? REDACTED : this.redact(v, depth + 1);
    }
    return out;
  }

  toJSON(): { kind: string } {
    return { kind: this.kind };
  }
}

function requireText(v: unknown, name: string): string {
  if (typeof v !== 'string' || v.trim() === '') throw new TypeError(`${name}: expected a non-empty string`);
  return v;
}
