// longest returns the length of the longest word.
function longest(words: string[]): number {
