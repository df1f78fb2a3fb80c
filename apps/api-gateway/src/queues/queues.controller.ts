import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { FairShareView, checkQueueTree, describeQueueTreeProblem, fairShareView } from '@gantry/domain';
import {
  QueueRecord,
  QueueUsage,
  Sql,
  autocommit,
  deleteEmptyQueue,
  findQueue,
  inTransaction,
  insertQueue,
  listQueues,
  loadFairShareStandings,
  lockQueueTree,
  queueTree,
  queueUsage,
  queueUsageOf,
  updateQueue,
} from '@gantry/persistence';
import { ApiError, ErrorCode } from '@gantry/platform';
import { CONFIG } from '@gantry/runtime';
import { AuditLog } from '../audit/audit-log';
import { BearerAuthGuard, CurrentPrincipal } from '../auth/bearer-auth.guard';
import { Principal } from '../auth/principal';
import { Roles } from '../auth/roles.decorator';
import { GatewayEnv } from '../config';
import { CreateQueueDto, QueueList, QueueView, UpdateQueueDto } from './queue.dto';

function toView(q: QueueRecord, usage: QueueUsage, fairShare: FairShareView): QueueView {
  return {
    name: q.name,
    priority: q.priority,
    quota: { gpus: q.quotaGpus },
    weight: q.weight,
    allowedOwners: q.allowedOwners,
    preemption: q.preemption,
    hostIpc: q.hostIpc,
    parent: q.parent,
    borrowingLimit: { gpus: q.borrowingLimitGpus },
    ownerWeights: q.ownerWeights,
    usage,
    fairShare,
    createdAt: q.createdAt.toISOString(),
    updatedAt: q.updatedAt.toISOString(),
  };
}

const UNAUTHENTICATED = { status: 401, description: 'Missing, unknown, expired or revoked token' } as const;
const OPERATORS_ONLY = { status: 403, description: 'Not an operator' } as const;
const RATE_LIMITED = { status: 429, description: "The token's request budget is spent (Retry-After)" } as const;

/** The queue every job without one goes to: it always exists. */
const DEFAULT_QUEUE = 'default';

/**
 * Under the tree's lock (lockQueueTree, in `sql`'s transaction): refuses a parent that would not
 * leave a tree of at most two levels: 400 for a parent that does not exist or is the queue itself,
 * 409 for a cycle or a third level.
 */
async function checkParent(sql: Sql, name: string, parent: string | null): Promise<void> {
  await lockQueueTree(sql);
  const tree = (await queueTree(sql)).filter((q) => q.name !== name);
  const problem = checkQueueTree([...tree, { name, parent }]);
  if (!problem) return;
  const detail = describeQueueTreeProblem(problem);
  if (problem.code === 'UNKNOWN_PARENT' || problem.code === 'SELF_PARENT')
    throw new ApiError(ErrorCode.VALIDATION_FAILED, detail, [{ field: 'parent', message: detail }]);
  throw new ApiError(ErrorCode.CONFLICT, detail);
}

/** Queues: a named pool with a priority band and a GPU quota. Anyone may read; operators write. */
@ApiTags('queues')
@ApiBearerAuth()
@UseGuards(BearerAuthGuard)
@Controller('v1/queues')
export class QueuesController {
  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    private readonly audit: AuditLog,
    @Inject(CONFIG) private readonly config: GatewayEnv,
  ) {}

  /**
   * Every queue with its usage and its fair share (ADR 0038), which depends on the other queues
   * of its band: their weights, whether they have work, and their decayed usage.
   */
  private async views(sql: Sql, only?: string): Promise<QueueView[]> {
    const nowMs = Date.now();
    const [queues, standings] = await Promise.all([listQueues(sql), loadFairShareStandings(sql, nowMs, this.config.GANTRY_FAIRSHARE_HALF_LIFE_HOURS * 3600)]);
    const usage = await queueUsage(
      sql,
      queues.map((q) => q.name),
    );
    const bandOf = (priority: number) =>
      queues
        .filter((q) => q.priority === priority)
        .map((q) => {
          const u = usage.get(q.name)!;
          return { name: q.name, weight: q.weight, usage: queueUsageOf(standings, q.name), active: u.jobsQueued > 0 || u.gpusHeld > 0 };
        });
    return queues.filter((q) => only === undefined || q.name === only).map((q) => toView(q, usage.get(q.name)!, fairShareView(q.name, bandOf(q.priority))));
  }

  @Post()
  @HttpCode(201)
  @Roles('operator')
  @ApiOperation({ operationId: 'queues.create', summary: 'Create a queue' })
  @ApiCreatedResponse({ type: QueueView })
  @ApiResponse({ status: 400, description: 'A bad field, or a parent that does not exist' })
  @ApiResponse({ status: 409, description: 'The name is taken, or the parent has a parent' })
  @ApiResponse(UNAUTHENTICATED)
  @ApiResponse(OPERATORS_ONLY)
  @ApiResponse(RATE_LIMITED)
  async create(@Body() dto: CreateQueueDto, @CurrentPrincipal() who: Principal): Promise<QueueView> {
    const q = {
      name: dto.name,
      priority: dto.priority,
      quotaGpus: dto.quota?.gpus ?? null,
      weight: dto.weight ?? 1,
      allowedOwners: dto.allowedOwners ?? null,
      preemption: dto.preemption ?? 'never',
      hostIpc: dto.hostIpc ?? false,
      ownerWeights: dto.ownerWeights ?? null,
      parent: dto.parent ?? null,
      borrowingLimitGpus: dto.borrowingLimit?.gpus ?? 0,
    } as const;
    const inserted =
      q.parent === null
        ? await insertQueue(autocommit(this.ds), q, new Date())
        : await inTransaction(this.ds, async (sql) => {
            if (await findQueue(sql, q.name)) return false;
            await checkParent(sql, q.name, q.parent);
            return insertQueue(sql, q, new Date());
          });
    if (!inserted) {
      throw new ApiError(ErrorCode.CONFLICT, `queue ${dto.name} already exists`);
    }
    await this.audit.record(who, 'queues.create', dto.name, {
      priority: q.priority,
      quotaGpus: q.quotaGpus,
      weight: q.weight,
      allowedOwners: q.allowedOwners,
      preemption: q.preemption,
      hostIpc: q.hostIpc,
      parent: q.parent,
      borrowingLimitGpus: q.borrowingLimitGpus,
      ownerWeights: q.ownerWeights,
    });
    return this.get(dto.name);
  }

  @Get()
  @ApiOperation({ operationId: 'queues.list', summary: 'Every queue with its usage and fair share' })
  @ApiOkResponse({ type: QueueList })
  @ApiResponse(UNAUTHENTICATED)
  @ApiResponse(RATE_LIMITED)
  async list(): Promise<QueueList> {
    return { items: await this.views(autocommit(this.ds)) };
  }

  @Get(':name')
  @ApiOperation({ operationId: 'queues.get', summary: 'One queue with its usage and fair share' })
  @ApiOkResponse({ type: QueueView })
  @ApiResponse({ status: 404, description: 'No such queue' })
  @ApiResponse(UNAUTHENTICATED)
  @ApiResponse(RATE_LIMITED)
  async get(@Param('name') name: string): Promise<QueueView> {
    const [q] = await this.views(autocommit(this.ds), name);
    if (!q) throw new ApiError(ErrorCode.NOT_FOUND, `queue ${name} not found`);
    return q;
  }

  @Patch(':name')
  @Roles('operator')
  @ApiOperation({ operationId: 'queues.update', summary: 'Change a queue: only the fields given (allowedOwners: null lets everyone submit)' })
  @ApiOkResponse({ type: QueueView })
  @ApiResponse({ status: 400, description: 'A bad field, or a parent that does not exist or is the queue itself' })
  @ApiResponse({ status: 404, description: 'No such queue' })
  @ApiResponse({ status: 409, description: 'The parent would make a cycle or a third level' })
  @ApiResponse(UNAUTHENTICATED)
  @ApiResponse(OPERATORS_ONLY)
  @ApiResponse(RATE_LIMITED)
  async update(@Param('name') name: string, @Body() dto: UpdateQueueDto, @CurrentPrincipal() who: Principal): Promise<QueueView> {
    const changes: Parameters<typeof updateQueue>[2] = {};
    if (dto.priority !== undefined) changes.priority = dto.priority;
    if (dto.weight !== undefined) changes.weight = dto.weight;
    if (dto.quota !== undefined) changes.quotaGpus = dto.quota.gpus;
    if (dto.allowedOwners !== undefined) changes.allowedOwners = dto.allowedOwners;
    if (dto.preemption !== undefined) changes.preemption = dto.preemption;
    if (dto.hostIpc !== undefined) changes.hostIpc = dto.hostIpc;
    if (dto.ownerWeights !== undefined) changes.ownerWeights = dto.ownerWeights;
    if (dto.borrowingLimit !== undefined) changes.borrowingLimitGpus = dto.borrowingLimit.gpus;
    if (dto.parent !== undefined) changes.parent = dto.parent;
    const q =
      changes.parent === undefined
        ? await updateQueue(autocommit(this.ds), name, changes, new Date())
        : await inTransaction(this.ds, async (sql) => {
            if (!(await findQueue(sql, name))) return null;
            await checkParent(sql, name, changes.parent!);
            return updateQueue(sql, name, changes, new Date());
          });
    if (!q) throw new ApiError(ErrorCode.NOT_FOUND, `queue ${name} not found`);
    await this.audit.record(who, 'queues.update', name, changes);
    return this.get(name);
  }

  @Delete(':name')
  @HttpCode(204)
  @Roles('operator')
  @ApiOperation({ operationId: 'queues.delete', summary: 'Delete a queue that holds no queued, scheduled or running job; its finished jobs keep its name' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiResponse({ status: 404, description: 'No such queue' })
  @ApiResponse({ status: 409, description: 'The queue holds live jobs, is the parent of another queue, or is `default`' })
  @ApiResponse(UNAUTHENTICATED)
  @ApiResponse(OPERATORS_ONLY)
  @ApiResponse(RATE_LIMITED)
  async delete(@Param('name') name: string, @CurrentPrincipal() who: Principal): Promise<void> {
    if (name === DEFAULT_QUEUE) throw new ApiError(ErrorCode.CONFLICT, 'the default queue cannot be deleted');
    switch (await deleteEmptyQueue(this.ds, name)) {
      case 'not-found':
        throw new ApiError(ErrorCode.NOT_FOUND, `queue ${name} not found`);
      case 'not-empty':
        throw new ApiError(ErrorCode.CONFLICT, `queue ${name} holds queued, scheduled or running jobs; cancel them or wait for them to end`);
      case 'has-children':
        throw new ApiError(ErrorCode.CONFLICT, `queue ${name} is the parent of other queues; give them another parent or none first`);
      case 'deleted':
        await this.audit.record(who, 'queues.delete', name);
    }
  }
}
