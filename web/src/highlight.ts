// Syntax colouring for diffs: highlight.js (its core and the languages below, so the bundle stays
// small and nothing loads at run time), the language from the file's extension. Each side of a
// diff is highlighted as one text, so a string or docstring that spans lines is coloured as one,
// then cut back into lines.

import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import dockerfile from "highlight.js/lib/languages/dockerfile";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import makefile from "highlight.js/lib/languages/makefile";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import type { ShownLine } from "./diff";

const LANGUAGES = { bash, c, cpp, css, dockerfile, go, ini, java, javascript, json, makefile, markdown, python, rust, sql, typescript, xml, yaml };
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);

const BY_EXTENSION: Record<string, keyof typeof LANGUAGES> = {
  py: "python", pyi: "python",
  js: "javascript", mjs: "javascript", cjs: "javascript", jsx: "javascript",
  ts: "typescript", tsx: "typescript", mts: "typescript", cts: "typescript",
  json: "json", jsonc: "json",
  sh: "bash", bash: "bash", zsh: "bash",
  yml: "yaml", yaml: "yaml",
  md: "markdown", markdown: "markdown",
  css: "css",
  html: "xml", htm: "xml", xml: "xml", svg: "xml",
  go: "go",
  rs: "rust",
  java: "java",
  c: "c", h: "c",
  cc: "cpp", cpp: "cpp", cxx: "cpp", hpp: "cpp", hh: "cpp",
  sql: "sql",
  toml: "ini", ini: "ini", cfg: "ini", conf: "ini",
};

const BY_NAME: Record<string, keyof typeof LANGUAGES> = { dockerfile: "dockerfile", makefile: "makefile", gnumakefile: "makefile" };

/** Past this many characters a side is shown plain: colouring must never stall the card. */
const MAX_CHARS = 200_000;

/** The highlight.js language for a file, from its extension (or name: Makefile, Dockerfile), or null. */
export function languageOf(path: string): string | null {
  const name = path.split(/[\\/]/).pop()?.toLowerCase() ?? "";
  if (BY_NAME[name]) return BY_NAME[name];
  const dot = name.lastIndexOf(".");
  return dot > 0 ? (BY_EXTENSION[name.slice(dot + 1)] ?? null) : null;
}

/** A run of text and the highlight.js classes it is coloured by ("" for plain text). */
export type Token = { text: string; className: string };

const ENTITIES: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#x27;": "'" };

/** highlight.js's HTML (nested `<span class>` and escaped text only) as tokens, one array per line. */
function tokenLines(html: string): Token[][] {
  const out: Token[][] = [[]];
  const open: string[] = [];
  for (const match of html.matchAll(/<span class="([^"]*)">|<\/span>|([^<]+)/g)) {
    if (match[1] !== undefined) open.push(match[1]);
    else if (match[2] === undefined) open.pop();
    else {
      const text = match[2].replace(/&(?:amp|lt|gt|quot|#x27);/g, (entity) => ENTITIES[entity]);
      const className = open.join(" ");
      text.split("\n").forEach((part, i) => {
        if (i > 0) out.push([]);
        if (part) out[out.length - 1].push({ text: part, className });
      });
    }
  }
  return out;
}

function highlightText(language: string, lines: string[]): Token[][] | null {
  const text = lines.join("\n");
  if (text.length > MAX_CHARS) return null;
  try {
    const found = tokenLines(hljs.highlight(text, { language, ignoreIllegals: true }).value);
    return found.length === lines.length ? found : null;
  } catch {
    return null; // a grammar that throws leaves the diff plain, never broken
  }
}

/**
 * The tokens of each line of a diff, or null when the file's language is unknown: the old side
 * (kept and removed lines) and the new side (kept and added lines) are highlighted apart. Gap and
 * header rows get no tokens.
 */
export function highlightDiff(path: string, lines: readonly ShownLine[]): (Token[] | null)[] | null {
  const language = languageOf(path);
  if (!language) return null;
  const oldSide: number[] = [];
  const newSide: number[] = [];
  lines.forEach((line, i) => {
    if (line.kind === "same" || line.kind === "del") oldSide.push(i);
    if (line.kind === "same" || line.kind === "add") newSide.push(i);
  });
  const out: (Token[] | null)[] = lines.map(() => null);
  for (const side of [oldSide, newSide]) {
    const tokens = highlightText(language, side.map((i) => lines[i].text));
    if (tokens) side.forEach((lineIndex, k) => (out[lineIndex] = tokens[k]));
  }
  return out;
}
