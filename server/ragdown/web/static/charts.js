// Small charts of counts per day for the usage section (docs/web.md#usage-charts): inline SVG built
// here, no library; colours come from the page's variables, so light and dark both read. A picture
// alone tells a screen reader nothing, so each chart's accessible name carries its numbers.
import { h } from "./dom.js";

const NS = "http://www.w3.org/2000/svg";
const STEP = 10; // the width one day takes, its bar 2 narrower
const PLOT = 70; // the height of the bars' area
const TOP = 12; // room for the scale's number
const BELOW = 14; // room for the first and last dates

function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  for (const child of children.flat()) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

// "1 search", "3 searches": `words` is [one, many].
const counted = (count, [one, many]) => `${count} ${count === 1 ? one : many}`;

// The frame every chart shares: the scale's top number, the base line, the first and last dates,
// and the accessible name (`label`, also the chart's tooltip) with the numbers.
function frame(days, label, top, marks) {
  const width = days.length * STEP;
  const last = days.length ? days[days.length - 1].day : "";
  return svg("svg", { viewBox: `0 0 ${width} ${TOP + PLOT + BELOW}`, role: "img", "aria-label": label },
    svg("title", {}, label),
    svg("text", { x: 0, y: TOP - 3 }, top),
    marks,
    svg("line", { class: "axis", x1: 0, x2: width, y1: TOP + PLOT + 0.5, y2: TOP + PLOT + 0.5 }),
    svg("text", { x: 0, y: TOP + PLOT + BELOW - 2 }, days.length ? days[0].day.slice(5) : ""),
    svg("text", { x: width, y: TOP + PLOT + BELOW - 2, "text-anchor": "end" }, last.slice(5)));
}

const span = (days) => (days.length ? `${days[0].day} to ${days[days.length - 1].day}` : "no days");

function legend(entries) {
  return h("span", { class: "legend" }, entries.map(([kind, text]) => h("span", {}, h("span", { class: `swatch ${kind}`, "aria-hidden": "true" }), text)));
}

// One bar per day, split in two: the calls that found something (below) and the gaps (above).
// `days` is [{day, total, gap}]; `words` {noun: [one, many], good, gap} says what they count.
export function barChart(title, days, words) {
  const most = Math.max(1, ...days.map((d) => d.total));
  const bars = days.map((d, index) => {
    const text = `${d.day}: ${counted(d.total, words.noun)}, ${d.gap} ${words.gap}`;
    const x = index * STEP + 1;
    const high = (d.total / most) * PLOT;
    const gapHigh = (d.gap / most) * PLOT;
    return svg("g", {}, svg("title", {}, text),
      svg("rect", { class: "hover", x: index * STEP, y: TOP, width: STEP, height: PLOT }),
      d.total > d.gap ? svg("rect", { class: "good", x, y: TOP + PLOT - high + gapHigh, width: STEP - 2, height: high - gapHigh }) : [],
      d.gap ? svg("rect", { class: "gap", x, y: TOP + PLOT - high, width: STEP - 2, height: gapHigh }) : []);
  });
  return h("figure", { class: "chart" }, frame(days, barLabel(title, days, words), most, bars),
    h("figcaption", {}, h("strong", {}, title), legend([["good", words.good], ["gap", words.gap]])));
}

// "Searches per day, 2026-11-06 to 2026-12-03: 5 searches in all, 2 found nothing good enough.
// 2026-12-03: 5 searches, 2 found nothing good enough. None on the other days."
function barLabel(title, days, words) {
  const busy = days.filter((d) => d.total);
  const total = busy.reduce((sum, d) => sum + d.total, 0);
  if (!total) return `${title}, ${span(days)}: no ${words.noun[1]}.`;
  const gaps = busy.reduce((sum, d) => sum + d.gap, 0);
  const each = busy.map((d) => `${d.day}: ${counted(d.total, words.noun)}, ${d.gap} ${words.gap}`).join("; ");
  const rest = busy.length < days.length ? " None on the other days." : "";
  return `${title}, ${span(days)}: ${counted(total, words.noun)} in all, ${gaps} ${words.gap}. ${each}.${rest}`;
}

const percent = (d) => Math.round((d.gap / d.total) * 100);

// The gaps' share per day, one line per kind of call (`series` is [[what, days, calls]], each day
// {day, total, gap}, `calls` what `total` counts); a day without calls has no point and breaks the line.
export function shareChart(title, series) {
  const days = series.length ? series[0][1] : [];
  const marks = series.map(([, points], n) => {
    const at = (d, index) => [index * STEP + STEP / 2, TOP + PLOT - (d.gap / d.total) * PLOT];
    let path = "";
    let drawing = false;
    for (const [index, d] of points.entries()) {
      if (!d.total) {
        drawing = false;
        continue;
      }
      const [x, y] = at(d, index);
      path += `${drawing ? "L" : "M"}${x} ${y} `;
      drawing = true;
    }
    // Each later series' dots are smaller, so where two lines meet both still show.
    const dots = points.map((d, index) => (d.total ? svg("circle", { class: `dot s${n}`, cx: at(d, index)[0], cy: at(d, index)[1], r: 3 - n }) : []));
    return svg("g", {}, path ? svg("path", { class: `line s${n}`, d: path.trim() }) : [], dots);
  });
  return h("figure", { class: "chart" }, frame(days, shareLabel(title, days, series), "100%", marks),
    h("figcaption", {}, h("strong", {}, title), legend(series.map(([what], n) => [`s${n}`, what]))));
}

// "Gaps per day, …: searches that found nothing good enough: 2026-12-03 40% (2 of 5); hook calls
// that added nothing: no hook calls."
function shareLabel(title, days, series) {
  const parts = series.map(([what, points, calls]) => {
    const busy = points.filter((d) => d.total);
    return `${what}: ${busy.length ? busy.map((d) => `${d.day} ${percent(d)}% (${d.gap} of ${d.total})`).join(", ") : `no ${calls}`}`;
  });
  return `${title}, ${span(days)}: ${parts.join("; ")}.`;
}
