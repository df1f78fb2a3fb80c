import { html, nothing } from 'lit';
import { LightElement } from '../shell/light-element';
import { Session, signIn } from '../shell/session';
import { errorText } from '../shell/ui';

/** The token form. On success it fires `gantry:signed-in` with the session. */
export class SignInPage extends LightElement {
  static override properties = { error: { state: true }, busy: { state: true } };
  declare error: string | null;
  declare busy: boolean;

  constructor() {
    super();
    this.error = null;
    this.busy = false;
  }

  private submit = async (e: SubmitEvent): Promise<void> => {
    e.preventDefault();
    const token = String(new FormData(e.target as HTMLFormElement).get('token') ?? '').trim();
    if (!token) return;
    this.busy = true;
    this.error = null;
    try {
      const session = await signIn(token);
      this.dispatchEvent(new CustomEvent<Session>('gantry:signed-in', { detail: session, bubbles: true }));
    } catch (err) {
      this.error = errorText(err);
    } finally {
      this.busy = false;
    }
  };

  protected override render() {
    return html`
      <div class="sign-in">
        <h1>Sign in to Gantry</h1>
        <p>
          Paste an API token: the admin token <code>npm start</code> printed, or one an operator made for you (<code>gantry tokens create</code>). It is kept in
          this tab only, until you sign out or close it.
        </p>
        <form @submit=${this.submit}>
          <label for="token">Token</label>
          <input
            id="token"
            name="token"
            type="password"
            autocomplete="off"
            spellcheck="false"
            required
            aria-describedby=${this.error ? 'sign-in-error' : nothing}
          />
          <button type="submit" ?disabled=${this.busy}>${this.busy ? 'Signing in…' : 'Sign in'}</button>
        </form>
        ${this.error ? html`<p id="sign-in-error" class="error" role="alert">${this.error}</p>` : nothing}
      </div>
    `;
  }
}

customElements.define('gantry-sign-in-page', SignInPage);
