/*
 * The site search's ranking (conf.py: html_search_scorer). Sphinx scores a page 15 when a query
 * word is in its title and 5 when it is in its text, and an API object 11-26 when its name
 * matches: a guide that teaches the query's subject ranked below every API entry whose name
 * holds the word. This scorer keeps Sphinx's scores and adds:
 * - a page or section whose title holds every query word (by stem: "rewards" holds "reward",
 *   "training" holds "train"): +20, where a reader should land;
 * - a guide: +8 (guides teach; API entries define);
 * - the records (benchmark history, changelog): -8.
 */
var Scorer = {
  score: (result) => {
    const [docname, title, anchor, descr, score, filename, kind] = result;
    let s = score;
    const query = new URLSearchParams(window.location.search).get("q") || "";
    const stemmer = typeof Stemmer === "undefined" ? null : new Stemmer();
    const stems = (text) =>
      text.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length > 2)
        .map((w) => (stemmer ? stemmer.stemWord(w) : w));
    const words = stems(query);
    if (kind !== "object" && words.length > 0) {
      const inTitle = new Set(stems(title || ""));
      if (words.every((w) => inTitle.has(w))) s += 20;
    }
    if (docname.startsWith("guides/")) s += 8;
    else if (docname === "benchmarks-history" || docname === "changelog") s -= 8;
    return s;
  },

  // Sphinx's own weights, unchanged
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: { 0: 15, 1: 5, 2: -5 },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};
