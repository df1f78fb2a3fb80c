import { nothing } from 'lit';
import { Directive, type ElementPart, type PartInfo, PartType, directive } from 'lit/directive.js';

/**
 * Sets style properties through the CSSOM (`el.style.setProperty`), which a CSP without
 * 'unsafe-inline' allows. lit's styleMap writes a `style` attribute on its first render, which the
 * console's CSP refuses. Use as an element binding: `<i ${cssProps({ background: c })}></i>`.
 */
class CssProps extends Directive {
  constructor(part: PartInfo) {
    super(part);
    if (part.type !== PartType.ELEMENT) throw new Error('cssProps() goes on an element, not in an attribute');
  }

  render(_props: Record<string, string>) {
    return nothing;
  }

  override update(part: ElementPart, [props]: [Record<string, string>]) {
    const style = (part.element as HTMLElement).style;
    for (const [name, value] of Object.entries(props)) style.setProperty(name, value);
    return nothing;
  }
}

export const cssProps = directive(CssProps);
