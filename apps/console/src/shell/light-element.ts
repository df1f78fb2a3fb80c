import { LitElement } from 'lit';

/**
 * A lit element that renders into itself rather than a shadow root: one stylesheet styles every
 * page, and labels, landmarks and ids work across the document as assistive technology expects.
 */
export class LightElement extends LitElement {
  protected override createRenderRoot(): HTMLElement {
    return this;
  }
}
