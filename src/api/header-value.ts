/**
 * What HTTP lets a header value hold (RFC 9110 field-value, as undici checks it): tab, visible
 * ASCII, space and obs-text (0x80-0xFF); never CR, LF, NUL or another control character, nor a
 * character above 0xFF. A key read from a file saved with Windows line endings ends in CR.
 */

const NAMES: Record<number, string> = {
  0x0d: 'a carriage return (CR)',
  0x0a: 'a line feed (LF)',
  0x00: 'a NUL character',
};

const isControl = (code: number) => code < 0x20 || code === 0x7f;
const headerRefuses = (code: number) => code !== 0x09 && (isControl(code) || code > 0xff);

/**
 * The first character of `value` that `refused` matches, named with where it is, or null.
 * Names the character, never the value itself (it is usually a secret).
 */
function firstRefused(value: string, refused: (code: number) => boolean): string | null {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (!refused(code)) continue;
    const hex = code.toString(16).toUpperCase().padStart(4, '0');
    const what =
      NAMES[code] ??
      (isControl(code)
        ? `a control character (U+${hex})`
        : `a character HTTP headers cannot carry (U+${hex})`);
    const where = i === value.length - 1 ? 'at the end' : `at position ${i + 1} of ${value.length}`;
    return `contains ${what} ${where}`;
  }
  return null;
}

/** Why `value` cannot be sent as a header value, or null when it can. */
export function invalidHeaderValue(value: string): string | null {
  return firstRefused(value, headerRefuses);
}

/**
 * Why a credential cannot be used as configured, or null: blank, a character an HTTP header
 * cannot carry (`inHeader`: an API key, sent as `Authorization: Bearer ...`), leading or trailing
 * blanks around a key, or, for values sent in a body (e-mail, password), a control character,
 * which no real one contains. Never quotes the value.
 */
export function credentialProblem(value: string, inHeader: boolean): string | null {
  if (value.trim() === '') return 'is blank (only whitespace): give the value, or leave it unset';
  const bad = firstRefused(value, inHeader ? headerRefuses : isControl);
  if (bad) {
    const hint = bad.includes('(CR)') ? ' (a file saved with Windows line endings?)' : '';
    return `${bad}${hint}: remove it`;
  }
  if (inHeader && value.trim() !== value) return 'starts or ends with blanks: remove them';
  return null;
}
