/**
 * A strict-enough XML well-formedness check for the junit output (no dependency): one root,
 * balanced and properly nested tags, quoted attributes without raw `<` or `&`, only the five
 * predefined entities or character references in text.
 */
export function assertWellFormedXml(xml: string): {
  root: string;
  elements: { name: string; attrs: Record<string, string>; text: string }[];
} {
  let s = xml.replace(/^<\?xml[^?]*\?>\s*/, "");
  const stack: string[] = [];
  const elements: { name: string; attrs: Record<string, string>; text: string }[] = [];
  let root = "";
  let rootClosed = false;
  const checkText = (t: string): void => {
    if (/<|&(?!(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/.test(t))
      throw new Error(`bad character data: ${t.slice(0, 60)}`);
  };
  while (s.length > 0) {
    const lt = s.indexOf("<");
    if (lt < 0) {
      if (s.trim()) throw new Error("text after the root element");
      break;
    }
    const text = s.slice(0, lt);
    checkText(text);
    if (stack.length === 0 && text.trim()) throw new Error("text outside the root element");
    const top = elements.findLast((e) => e.name === stack.at(-1));
    if (top) top.text += text;
    s = s.slice(lt);
    const m = /^<(\/?)([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.-]*="[^"<]*")*)\s*(\/?)>/.exec(s);
    if (!m) throw new Error(`malformed tag near: ${s.slice(0, 80)}`);
    const [all, close, name = "", attrText = "", selfClose] = m;
    if (close) {
      if (stack.pop() !== name) throw new Error(`mismatched </${name}>`);
      if (stack.length === 0) rootClosed = true;
    } else {
      if (rootClosed) throw new Error("second root element");
      if (stack.length === 0) root = name;
      const attrs: Record<string, string> = {};
      for (const a of attrText.matchAll(/([A-Za-z_][\w.-]*)="([^"]*)"/g)) {
        checkText(a[2] ?? "");
        if ((a[1] as string) in attrs) throw new Error(`duplicate attribute ${a[1]}`);
        attrs[a[1] as string] = a[2] ?? "";
      }
      elements.push({ name, attrs, text: "" });
      if (!selfClose) stack.push(name);
      else if (stack.length === 0) rootClosed = true;
    }
    s = s.slice(all.length);
  }
  if (stack.length > 0) throw new Error(`unclosed <${stack.join("><")}>`);
  if (!root) throw new Error("no root element");
  return { root, elements };
}
