// longest returns the length of the longest word.
function longest(words: string[]): number {
  let best = 0;
  for (const w of words) if (w.length > best) best = w.length;
  return best;
}
