import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { JobRecord, NewJob, autocommit, createJobs } from '@gantry/persistence';

/**
 * makeJob().gpus(8).model('H100').insert(ds): a QUEUED job with its CREATED event, written by
 * createJobs, the statement the gateway runs for POST /v1/jobs (with its wake-up message).
 */
export class JobBuilder {
  private job: NewJob = {
    id: randomUUID(),
    owner: 'test',
    queue: 'default',
    name: 'test-job',
    image: 'none',
    command: ['sh', '-c', 'exit 0'],
    env: {},
    labels: {},
    gpus: 0,
    gpuModel: null,
    cpuCores: 1,
    memoryMiB: 1024,
    nodes: 1,
    maxRetries: 0,
    traceParent: null,
    createdAt: new Date(),
  };

  gpus(n: number): this {
    this.job.gpus = n;
    return this;
  }
  model(m: string | null): this {
    this.job.gpuModel = m;
    return this;
  }
  cpu(n: number): this {
    this.job.cpuCores = n;
    return this;
  }
  memory(mib: number): this {
    this.job.memoryMiB = mib;
    return this;
  }
  gang(n: number): this {
    this.job.nodes = n;
    return this;
  }
  owner(o: string): this {
    this.job.owner = o;
    return this;
  }
  queue(q: string): this {
    this.job.queue = q;
    return this;
  }
  command(...c: string[]): this {
    this.job.command = c;
    return this;
  }
  maxRetries(n: number): this {
    this.job.maxRetries = n;
    return this;
  }
  maxRuntime(seconds: number): this {
    this.job.maxRuntimeSeconds = seconds;
    return this;
  }
  traceParent(tp: string): this {
    this.job.traceParent = tp;
    return this;
  }

  build(): NewJob {
    return { ...this.job };
  }

  async insert(ds: DataSource): Promise<JobRecord> {
    const [outcome] = await createJobs(autocommit(ds), [{ job: this.build(), idempotency: null }], new Date(), 0);
    if (outcome.kind !== 'created') throw new Error(`makeJob: job not created (${outcome.kind})`);
    return outcome.job;
  }
}

export const makeJob = () => new JobBuilder();
