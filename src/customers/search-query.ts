/** Caps the work one search does: a longer query adds nothing a person would type. */
const MAX_TERMS = 10;
const MAX_TERM_LENGTH = 100;

/**
 * Turns free text into a tsquery that matches every word as a prefix (D-23): "acm co" becomes
 * `acm:* & co:*`. Only runs of letters, marks and digits (any script) survive, so quotes, `&`, `|`, `!`,
 * `:` or parentheses in the input can never reach tsquery syntax; they separate words like spaces.
 * Case is left to to_tsquery's `simple` dictionary, which lowers it exactly as the indexed
 * to_tsvector did. Undefined when the text holds no word at all (the search then matches nothing).
 */
export function prefixTsquery(text: string): string | undefined {
  const words = text.normalize('NFKC').match(/[\p{L}\p{M}\p{N}]+/gu) ?? [];
  const terms = [...new Set(words.map((w) => w.slice(0, MAX_TERM_LENGTH)))].slice(0, MAX_TERMS);
  if (terms.length === 0) return undefined;
  return terms.map((t) => `${t}:*`).join(' & ');
}
