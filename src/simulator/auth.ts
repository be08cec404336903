/**
 * Bearer tokens (spec 5): accepted API keys plus login tokens. Logout revokes only the login
 * token it was called with; an API key is revoked by deleting it in the web UI, which the
 * simulator does not model, so a logout made with an API key leaves the key valid.
 */
import { Rng, tag } from './rng.ts';

export interface AuthOptions {
  seed: number;
  apiKeys: readonly string[];
  email: string;
  password: string;
}

export class AuthStore {
  private readonly keys: Set<string>;
  private readonly tokens = new Set<string>();
  private issued = 0;

  constructor(private readonly opts: AuthOptions) {
    this.keys = new Set(opts.apiKeys);
  }

  /** The token of an `Authorization: Bearer <token>` header, or null. */
  static bearer(header: string | undefined): string | null {
    if (!header || header.length < 8) return null;
    const scheme = header.slice(0, 7);
    if (scheme !== 'Bearer ' && scheme.toLowerCase() !== 'bearer ') return null;
    const token = header.slice(7).trim();
    return token === '' ? null : token;
  }

  isValid(token: string | null): boolean {
    return token !== null && (this.keys.has(token) || this.tokens.has(token));
  }

  /** A new token for the configured credentials, or null. */
  login(email: string, password: string): string | null {
    if (email !== this.opts.email || password !== this.opts.password) return null;
    const token = `${++this.issued}|${Rng.of(this.opts.seed, tag('login-token'), this.issued).hex(40)}`;
    this.tokens.add(token);
    return token;
  }

  logout(token: string): void {
    this.tokens.delete(token);
  }

  /** Login tokens issued and not revoked by a logout. */
  get liveTokens(): number {
    return this.tokens.size;
  }
}
