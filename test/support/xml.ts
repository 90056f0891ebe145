/**
 * A minimal XML parser for tests: enough to prove junit.xml is well-formed (one root, tags
 * nested and closed, attributes quoted and unique, only the five predefined entities or
 * character references) and to read it back as a tree. Throws on the first error.
 */
export interface XmlNode {
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
  text: string;
}

const NAME = /^[A-Za-z_:][-A-Za-z0-9_.:]*/;
const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function decode(s: string, where: number): string {
  return s.replace(/&([^;&\s]*);?/g, (m, body: string) => {
    if (!m.endsWith(";")) throw new Error(`bare & at ${where}`);
    if (body in ENTITIES) return ENTITIES[body] as string;
    const n = body.startsWith("#x")
      ? Number.parseInt(body.slice(2), 16)
      : body.startsWith("#")
        ? Number.parseInt(body.slice(1), 10)
        : Number.NaN;
    if (!Number.isFinite(n)) throw new Error(`unknown entity &${body}; at ${where}`);
    return String.fromCodePoint(n);
  });
}

export function parseXml(src: string): XmlNode {
  let i = 0;
  const fail = (msg: string): never => {
    throw new Error(`${msg} at offset ${i}: ${JSON.stringify(src.slice(i, i + 40))}`);
  };
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x08\x0B\x0C\x0E-\x1F]/.test(src)) fail("control character");
  const skipWs = (): void => {
    while (i < src.length && /\s/.test(src[i] as string)) i++;
  };
  if (src.startsWith("<?xml")) {
    const end = src.indexOf("?>");
    if (end < 0) fail("unterminated declaration");
    i = end + 2;
  }
  const stack: XmlNode[] = [];
  let root: XmlNode | undefined;
  while (i < src.length) {
    if (stack.length === 0) skipWs();
    if (i >= src.length) break;
    if (src.startsWith("<!--", i)) {
      const end = src.indexOf("-->", i);
      if (end < 0) fail("unterminated comment");
      i = end + 3;
      continue;
    }
    if (src[i] === "<") {
      if (src[i + 1] === "/") {
        i += 2;
        const m = NAME.exec(src.slice(i));
        if (!m) fail("bad closing tag");
        const name = m![0];
        i += name.length;
        skipWs();
        if (src[i] !== ">") fail("bad closing tag");
        i++;
        const open = stack.pop();
        if (!open || open.name !== name) fail(`</${name}> closes <${open?.name ?? "nothing"}>`);
        continue;
      }
      i++;
      const m = NAME.exec(src.slice(i));
      if (!m) fail("bad tag name");
      const node: XmlNode = { name: m![0], attrs: {}, children: [], text: "" };
      i += node.name.length;
      for (;;) {
        const before = i;
        skipWs();
        if (src.startsWith("/>", i)) {
          i += 2;
          break;
        }
        if (src[i] === ">") {
          i++;
          stack.push(node);
          break;
        }
        if (i === before) fail("attributes need white space between them");
        const a = NAME.exec(src.slice(i));
        if (!a) fail("bad attribute name");
        const an = a![0];
        i += an.length;
        skipWs();
        if (src[i] !== "=") fail("attribute without =");
        i++;
        skipWs();
        const q = src[i];
        if (q !== '"' && q !== "'") fail("unquoted attribute");
        const end = src.indexOf(q as string, i + 1);
        if (end < 0) fail("unterminated attribute");
        const raw = src.slice(i + 1, end);
        if (raw.includes("<")) fail("< in attribute value");
        if (an in node.attrs) fail(`duplicate attribute ${an}`);
        node.attrs[an] = decode(raw, i);
        i = end + 1;
      }
      const parent = stack[stack.length - (stack[stack.length - 1] === node ? 2 : 1)];
      if (parent) parent.children.push(node);
      else if (root) fail("second root element");
      else root = node;
      continue;
    }
    const next = src.indexOf("<", i);
    const text = src.slice(i, next < 0 ? src.length : next);
    const top = stack[stack.length - 1];
    if (!top) {
      if (text.trim() !== "") fail("text outside the root");
    } else top.text += decode(text, i);
    i = next < 0 ? src.length : next;
  }
  if (stack.length) fail(`<${stack[stack.length - 1]?.name}> not closed`);
  if (!root) fail("no root element");
  return root!;
}

/** Every node named `name`, depth first. */
export function findAll(node: XmlNode, name: string): XmlNode[] {
  const out: XmlNode[] = [];
  const walk = (n: XmlNode): void => {
    if (n.name === name) out.push(n);
    n.children.forEach(walk);
  };
  walk(node);
  return out;
}

/** Parses `xml` (throws when it is not well-formed) and flattens it for quick checks: the root's name and every element. */
export function assertWellFormedXml(xml: string): {
  root: string;
  elements: { name: string; attrs: Record<string, string>; text: string }[];
} {
  const doc = parseXml(xml);
  const elements: { name: string; attrs: Record<string, string>; text: string }[] = [];
  const walk = (n: XmlNode): void => {
    elements.push({ name: n.name, attrs: n.attrs, text: n.text });
    n.children.forEach(walk);
  };
  walk(doc);
  return { root: doc.name, elements };
}
