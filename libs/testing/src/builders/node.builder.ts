import { DataSource } from 'typeorm';
import { NodeTopology } from '@gantry/domain';
import { autocommit, upsertNodeTopology } from '@gantry/persistence';
import { uniqueTag } from '../test-env';

/** makeNode().gpus(8, 'H100').insert(ds): a registered node with nothing allocated. */
export class NodeBuilder {
  private node: NodeTopology = {
    id: uniqueTag('node'),
    zone: 'z1',
    rack: 'r1',
    gpuModel: 'H100',
    gpusTotal: 8,
    gpuIndices: [0, 1, 2, 3, 4, 5, 6, 7],
    cpuCores: 64,
    memoryMiB: 524288,
    address: null,
    logsPort: null,
  };

  id(id: string): this {
    this.node.id = id;
    return this;
  }
  /** `n` healthy GPUs, devices 0 .. n - 1. */
  gpus(n: number, model: string | null = 'H100'): this {
    return this.devices(
      Array.from({ length: n }, (_, i) => i),
      model,
    );
  }
  /** Healthy GPUs with these device indices (the others unhealthy or absent). */
  devices(indices: number[], model: string | null = 'H100'): this {
    this.node.gpuIndices = [...indices];
    this.node.gpusTotal = indices.length;
    this.node.gpuModel = model;
    return this;
  }
  address(a: string | null): this {
    this.node.address = a;
    return this;
  }
  cpu(n: number): this {
    this.node.cpuCores = n;
    return this;
  }
  memory(mib: number): this {
    this.node.memoryMiB = mib;
    return this;
  }
  rack(r: string): this {
    this.node.rack = r;
    return this;
  }

  build(): NodeTopology {
    return { ...this.node, gpuIndices: [...this.node.gpuIndices] };
  }

  async insert(ds: DataSource): Promise<NodeTopology> {
    await upsertNodeTopology(autocommit(ds), [this.node], new Date());
    return this.build();
  }
}

export const makeNode = () => new NodeBuilder();
