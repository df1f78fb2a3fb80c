import { Body, Controller, Get, HttpCode, Inject, Param, Patch, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { QueueRecord, QueueUsage, autocommit, findQueue, insertQueue, listQueues, queueUsage, updateQueue } from '@gantry/persistence';
import { ApiError, ErrorCode } from '@gantry/platform';
import { BearerAuthGuard } from '../auth/bearer-auth.guard';
import { Roles } from '../auth/roles.decorator';
import { CreateQueueDto, QueueList, QueueView, UpdateQueueDto } from './queue.dto';

function toView(q: QueueRecord, usage: QueueUsage): QueueView {
  return {
    name: q.name, priority: q.priority, quota: { gpus: q.quotaGpus }, weight: q.weight, usage,
    createdAt: q.createdAt.toISOString(), updatedAt: q.updatedAt.toISOString(),
  };
}

/** Queues: a named pool with a priority band and a GPU quota. Anyone may read; operators write. */
@ApiTags('queues')
@ApiBearerAuth()
@UseGuards(BearerAuthGuard)
@Controller('v1/queues')
export class QueuesController {
  constructor(@Inject(DataSource) private readonly ds: DataSource) {}

  @Post()
  @HttpCode(201)
  @Roles('operator')
  @ApiCreatedResponse({ type: QueueView })
  async create(@Body() dto: CreateQueueDto): Promise<QueueView> {
    const sql = autocommit(this.ds);
    if (!(await insertQueue(sql, { name: dto.name, priority: dto.priority, quotaGpus: dto.quota?.gpus ?? null, weight: dto.weight ?? 1 }, new Date()))) {
      throw new ApiError(ErrorCode.CONFLICT, `queue ${dto.name} already exists`);
    }
    return this.get(dto.name);
  }

  @Get()
  @ApiOkResponse({ type: QueueList })
  async list(): Promise<QueueList> {
    const sql = autocommit(this.ds);
    const queues = await listQueues(sql);
    const usage = await queueUsage(sql, queues.map((q) => q.name));
    return { items: queues.map((q) => toView(q, usage.get(q.name)!)) };
  }

  @Get(':name')
  @ApiOkResponse({ type: QueueView })
  async get(@Param('name') name: string): Promise<QueueView> {
    const sql = autocommit(this.ds);
    const q = await findQueue(sql, name);
    if (!q) throw new ApiError(ErrorCode.NOT_FOUND, `queue ${name} not found`);
    return toView(q, (await queueUsage(sql, [name])).get(name)!);
  }

  @Patch(':name')
  @Roles('operator')
  @ApiOkResponse({ type: QueueView })
  async update(@Param('name') name: string, @Body() dto: UpdateQueueDto): Promise<QueueView> {
    const changes: { priority?: number; quotaGpus?: number | null; weight?: number } = {};
    if (dto.priority !== undefined) changes.priority = dto.priority;
    if (dto.weight !== undefined) changes.weight = dto.weight;
    if (dto.quota !== undefined) changes.quotaGpus = dto.quota.gpus;
    const q = await updateQueue(autocommit(this.ds), name, changes, new Date());
    if (!q) throw new ApiError(ErrorCode.NOT_FOUND, `queue ${name} not found`);
    return this.get(name);
  }
}
