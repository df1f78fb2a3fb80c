import { join } from 'node:path';
import { KafkaCredentials, SERVICE_KAFKA_ROLE, kafkaEnvFor } from './kafka-credentials';
import { SERVICES, ServiceName, ServiceProcess } from './service-process';
import { StackSecrets, generateStackSecrets } from './stack-secrets';

export interface StackOptions {
  root: string;
  logDir: string;
  /** First port; services take consecutive ones (gateway first). */
  basePort: number;
  env: Record<string, string>;
  /** Extra env per service. */
  serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>;
  readyTimeoutMs?: number;
  /**
   * Processes per service (default 1). Extra replicas are named `<service>-2`, `<service>-3`, … and
   * listen on the ports after the last service's, in SERVICES order.
   */
  replicas?: Partial<Record<ServiceName, number>>;
  /**
   * The broker's users (scripts/kafka/start.sh's credentials.json): each service then connects as
   * its own principal. Without them, the KAFKA_SASL_* of `env` (if any) go to every service.
   */
  kafkaCredentials?: KafkaCredentials | null;
  /** The control plane's secrets; generated for this stack when not given. */
  secrets?: StackSecrets;
}

/** Starts the four control-plane services and the agent as processes; stops them in reverse. */
export class Stack {
  readonly services: ServiceProcess[];
  readonly secrets: StackSecrets;

  /** The port the next extra process takes (see extra). */
  private nextPort: number;

  constructor(private readonly opts: StackOptions) {
    this.secrets = opts.secrets ?? generateStackSecrets();
    this.services = SERVICES.map(
      (service, i) =>
        new ServiceProcess({
          name: service,
          service,
          port: opts.basePort + i,
          env: this.envFor(service),
          logDir: opts.logDir,
          root: opts.root,
        }),
    );
    let port = opts.basePort + SERVICES.length;
    for (const service of SERVICES) {
      for (let k = 2; k <= (opts.replicas?.[service] ?? 1); k++) {
        this.services.push(
          new ServiceProcess({
            name: `${service}-${k}`,
            service,
            port: port++,
            env: this.envFor(service),
            logDir: opts.logDir,
            root: opts.root,
          }),
        );
      }
    }
    this.nextPort = port;
  }

  /**
   * One more process of `service` beside the stack (another agent with a fleet of its own, a second
   * reconciler), with the env a process of that service gets (envFor) plus `env`, on the next free port after the stack's, logging
   * with the others. Not started: the caller starts and stops it (and `stop()` does not).
   */
  extra(name: string, service: ServiceName, env: Record<string, string> = {}): ServiceProcess {
    return new ServiceProcess({ name, service, port: this.nextPort++, env: this.envFor(service, env), logDir: this.opts.logDir, root: this.opts.root });
  }

  /**
   * The environment a process of `service` runs with: the stack's env, the service's own Kafka
   * principal (a real agent: its node's, see below), the control plane's secrets where the service
   * needs them (an agent gets only the public key, and enrolls its nodes through the gateway with
   * the admin token; only the gateway gets the cursor key), then the service's extra env. For extra
   * processes a test starts next to the stack, too.
   */
  envFor(service: ServiceName, extra: Record<string, string> = {}): Record<string, string> {
    const o = this.opts;
    const kafka = o.kafkaCredentials ? kafkaEnvFor(o.kafkaCredentials, SERVICE_KAFKA_ROLE[service]) : {};
    const secrets: Record<string, string> =
      service === 'node-agent'
        ? {
            GANTRY_COMMAND_PUBLIC_KEY: this.secrets.commandPublicKey,
            GANTRY_ENROLL_URL: `http://127.0.0.1:${o.basePort}`,
            ...(o.env.GANTRY_ADMIN_TOKEN ? { GANTRY_ENROLL_TOKEN: o.env.GANTRY_ADMIN_TOKEN } : {}),
          }
        : {
            GANTRY_COMMAND_SIGNING_KEY: this.secrets.commandSigningKey,
            GANTRY_NODE_CREDENTIAL_SECRET: this.secrets.nodeCredentialSecret,
            ...(service === 'api-gateway' ? { GANTRY_CURSOR_SECRET: this.secrets.cursorSecret } : {}),
          };
    // The gateway signs real agents' Kafka tokens with the broker's key (ADR 0034).
    const agentKafka: Record<string, string> =
      service === 'api-gateway' && o.kafkaCredentials?.agentTokenKey ? { GANTRY_AGENT_KAFKA_TOKEN_KEY: o.kafkaCredentials.agentTokenKey } : {};
    const env: Record<string, string> = { ...o.env, ...kafka, ...secrets, ...agentKafka, ...(o.serviceEnv?.[service] ?? {}), ...extra };
    // A real agent (no simulated nodes) is its node's own principal, with tokens from the gateway:
    // the fleet's user is never a real node's.
    if (service === 'node-agent' && env.GANTRY_SIM_NODES === '0' && o.kafkaCredentials?.agentTokenKey) {
      delete env.KAFKA_SASL_USERNAME;
      delete env.KAFKA_SASL_PASSWORD;
      env.KAFKA_SASL_MECHANISM = 'oauthbearer';
      env.GANTRY_GATEWAY_URL ??= `http://127.0.0.1:${o.basePort}`;
    }
    return env;
  }

  /** Every process of one service, the first replica first. */
  all(service: ServiceName): ServiceProcess[] {
    return this.services.filter((s) => s.opts.service === service);
  }

  get(service: ServiceName): ServiceProcess {
    return this.services.find((s) => s.opts.service === service)!;
  }

  get gatewayUrl(): string {
    return this.get('api-gateway').url;
  }

  /** Control plane first (consumers joined before agents produce), then the agent. */
  async start(): Promise<void> {
    const timeout = this.opts.readyTimeoutMs ?? 60_000;
    const controlPlane = this.services.filter((s) => s.opts.service !== 'node-agent');
    try {
      for (const s of controlPlane) s.start();
      await Promise.all(controlPlane.map((s) => s.ready(timeout)));
      const agents = this.all('node-agent');
      for (const a of agents) a.start();
      await Promise.all(agents.map((a) => a.ready(timeout)));
    } catch (e) {
      await this.stop();
      throw e;
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.all('node-agent').map((s) => s.stop()));
    await Promise.all(this.services.filter((s) => s.opts.service !== 'node-agent').map((s) => s.stop()));
  }

  logDir(): string {
    return join(this.opts.logDir);
  }
}
