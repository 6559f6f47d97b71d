// What the conflict dialog shows (docs/web.md#screens): the lines on disk against the person's edit,
// as a compact line diff, so that "Save over it" is chosen knowing what it throws away.
import { h } from "./dom.js";

// Past this many line pairs in the changed middle, the middle is shown whole on both sides instead
// of matched line by line (the table below grows with their product).
const MATCH_LIMIT = 4_000_000;
// Unchanged lines shown around a change; longer runs become "…".
const CONTEXT = 2;
// The most lines the dialog shows.
const MOST = 400;

// Each line of `before` and `after` as [kind, text]: " " in both, "-" only before, "+" only after.
export function lineDiff(before, after) {
  const a = before.split("\n");
  const b = after.split("\n");
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const oldMiddle = a.slice(start, endA);
  const newMiddle = b.slice(start, endB);
  const middle = oldMiddle.length * newMiddle.length > MATCH_LIMIT
    ? [...oldMiddle.map((line) => ["-", line]), ...newMiddle.map((line) => ["+", line])]
    : matched(oldMiddle, newMiddle);
  const same = (line) => [" ", line];
  return [...a.slice(0, start).map(same), ...middle, ...a.slice(endA).map(same)];
}

// A longest common subsequence of lines, walked from the top.
function matched(a, b) {
  const longest = common(a, b);
  const out = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push([" ", a[i]]);
      i += 1;
      j += 1;
    } else if (j >= b.length || (i < a.length && longest[i + 1][j] >= longest[i][j + 1])) {
      out.push(["-", a[i]]);
      i += 1;
    } else {
      out.push(["+", b[j]]);
      j += 1;
    }
  }
  return out;
}

// longest[i][j]: how many lines the longest common subsequence of a[i…] and b[j…] holds.
function common(a, b) {
  const longest = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      longest[i][j] = a[i] === b[j] ? longest[i + 1][j + 1] + 1 : Math.max(longest[i + 1][j], longest[i][j + 1]);
    }
  }
  return longest;
}

const CLASSES = { " ": "same", "-": "disk", "+": "mine" };

// The diff as an element: the changed lines with a little context, on disk marked "disk", the edit
// "mine" (the stylesheet gives them their − and + signs).
export function diffView(disk, mine) {
  const lines = lineDiff(disk.replace(/\r\n/g, "\n"), mine.replace(/\r\n/g, "\n"));
  const changed = lines.map(([kind]) => kind !== " ");
  const near = (i) => changed.slice(Math.max(0, i - CONTEXT), i + CONTEXT + 1).some(Boolean);
  const rows = [];
  let skipping = false;
  for (const [i, [kind, text]] of lines.entries()) {
    if (!near(i)) {
      if (!skipping) rows.push(h("span", { class: "skip" }, "…"));
      skipping = true;
      continue;
    }
    skipping = false;
    rows.push(h("span", { class: CLASSES[kind] }, text));
  }
  if (!changed.some(Boolean)) return h("p", { class: "empty" }, "What is on disk is what you wrote.");
  const more = rows.length > MOST ? h("p", { class: "empty" }, `… and ${rows.length - MOST} more lines.`) : null;
  return [h("div", { class: "diff", role: "group", "aria-label": "On disk (−) against your edit (+)" }, rows.slice(0, MOST)), more];
}
