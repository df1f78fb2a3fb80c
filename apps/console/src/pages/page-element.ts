import type { PropertyDeclarations } from 'lit';
import type { Capabilities } from '../shell/capabilities';
import { LightElement } from '../shell/light-element';
import type { Session } from '../shell/session';

/** A page of the console: it gets the session and what the gateway can do. */
export class PageElement extends LightElement {
  static override properties: PropertyDeclarations = { session: { attribute: false }, caps: { attribute: false } };
  declare session: Session;
  declare caps: Capabilities | null;

  get isOperator(): boolean {
    return this.session.role === 'operator';
  }
}
