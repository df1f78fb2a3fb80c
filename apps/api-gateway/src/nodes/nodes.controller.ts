import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import {
  DrainNodeDto,
  EnrollNodeDto,
  NodeEnrollmentView,
  NodeEnrollmentsView,
  NodeEventPage,
  NodeIdsDto,
  NodePage,
  NodeView,
  UpdateNodeDto,
} from '@gantry/contracts';
import { ApiError, ErrorCode } from '@gantry/platform';
import { BearerAuthGuard, CurrentPrincipal } from '../auth/bearer-auth.guard';
import { Principal } from '../auth/principal';
import { Roles } from '../auth/roles.decorator';
import { canonicalSha256 } from '../http/canonical-json';
import { CursorCodec } from '../http/cursor-codec';
import { EnrollmentService } from '../enrollment/enrollment.service';
import { ListNodesQuery } from './list-nodes.query';
import { NodeEventsQuery } from './node-events.query';
import { NodesService } from './nodes.service';

const isEventCursor = (v: unknown): v is { n: string; e: number } =>
  typeof v === 'object' && v !== null && typeof (v as { n?: unknown }).n === 'string' && typeof (v as { e?: unknown }).e === 'number';

const isNodeCursor = (v: unknown): v is { i: string; f: string } =>
  typeof v === 'object' && v !== null && typeof (v as { i?: unknown }).i === 'string' && typeof (v as { f?: unknown }).f === 'string';

/** Nodes: durable topology and allocations joined with live health and telemetry. Anyone reads; operators cordon. */
@ApiTags('nodes')
@ApiBearerAuth()
@UseGuards(BearerAuthGuard)
@Controller('v1/nodes')
export class NodesController {
  constructor(
    private readonly nodes: NodesService,
    private readonly enrollment: EnrollmentService,
    @Inject(CursorCodec) private readonly cursors: CursorCodec,
  ) {}

  @Get()
  @ApiOkResponse({ type: NodePage, description: 'Ordered by id. A node that exists and matches the filter for the whole listing appears exactly once.' })
  async list(@Query() q: ListNodesQuery, @CurrentPrincipal() who: Principal): Promise<NodePage> {
    const filter = { gpuModel: q.gpuModel, zone: q.zone };
    const signature = canonicalSha256({ ...filter, health: q.health }).slice(0, 16);
    let after: string | null = null;
    if (q.cursor) {
      const c = this.cursors.decode(q.cursor, isNodeCursor);
      // A cursor is bound to its filter: reused with another filter it would skip or repeat nodes.
      if (c.f !== signature) throw new ApiError(ErrorCode.INVALID_CURSOR, 'cursor was issued for a different filter');
      after = c.i;
    }
    const { items, continueAfter } = await this.nodes.list(filter, q.health, after, q.limit ?? 50, who);
    return { items, nextCursor: continueAfter === null ? null : this.cursors.encode({ i: continueAfter, f: signature }) };
  }

  @Get(':id')
  @ApiOkResponse({ type: NodeView })
  async get(@Param('id') id: string, @CurrentPrincipal() who: Principal): Promise<NodeView> {
    return this.nodes.get(id, who);
  }

  @Get(':id/events')
  @ApiOkResponse({ type: NodeEventPage, description: "The node's history, oldest first: health changes, evictions, cordons" })
  async events(@Param('id') id: string, @Query() q: NodeEventsQuery, @CurrentPrincipal() who: Principal): Promise<NodeEventPage> {
    const limit = q.limit ?? 100;
    let after = 0;
    if (q.cursor) {
      const c = this.cursors.decode(q.cursor, isEventCursor);
      if (c.n !== id) throw new ApiError(ErrorCode.INVALID_CURSOR, 'cursor belongs to another node');
      after = c.e;
    }
    const events = await this.nodes.events(id, after, limit + 1, who);
    const page = events.slice(0, limit);
    return { items: page, nextCursor: events.length > limit ? this.cursors.encode({ n: id, e: page[page.length - 1].id }) : null };
  }

  @Post(':id/cordon')
  @HttpCode(200)
  @Roles('operator')
  @ApiOkResponse({ type: NodeView, description: 'The node, cordoned: it gets no new work. Repeating it is harmless.' })
  async cordon(@Param('id') id: string, @CurrentPrincipal() who: Principal): Promise<NodeView> {
    return this.nodes.setCordoned(id, true, who);
  }

  @Post(':id/drain')
  @HttpCode(200)
  @Roles('operator')
  @ApiOkResponse({
    type: NodeView,
    description:
      'The node, cordoned at once; after gracePeriodSeconds every attempt still on it is ended and requeued (reason NODE_DRAINED, no retry used) and the node gets a DRAINED event. An uncordon cancels a drain not yet done',
  })
  async drain(@Param('id') id: string, @Body() body: DrainNodeDto, @CurrentPrincipal() who: Principal): Promise<NodeView> {
    return this.nodes.drain(id, body.gracePeriodSeconds, who);
  }

  @Post(':id/uncordon')
  @HttpCode(200)
  @Roles('operator')
  @ApiOkResponse({ type: NodeView, description: 'The node, placeable again. Repeating it is harmless.' })
  async uncordon(@Param('id') id: string, @CurrentPrincipal() who: Principal): Promise<NodeView> {
    return this.nodes.setCordoned(id, false, who);
  }

  @Patch(':id')
  @Roles('operator')
  @ApiOperation({
    summary: "Change a node's pinned inventory",
    description:
      'The fields of `declared` given replace the pinned ones (JSON merge patch). From the commit on, placement believes the lesser of the result and what the node reports; work already placed keeps what it holds. Audited',
  })
  @ApiOkResponse({ type: NodeView, description: 'The node, with its new `declared` and the capacity now believed' })
  @ApiResponse({ status: 404, description: 'No such node, or it has not reported yet (enroll it again with an inventory)' })
  async update(@Param('id') id: string, @Body() body: UpdateNodeDto, @CurrentPrincipal() who: Principal): Promise<NodeView> {
    return this.nodes.update(id, body.declared, who);
  }

  @Delete(':id')
  @HttpCode(204)
  @Roles('operator')
  @ApiOperation({
    operationId: 'nodes.delete',
    summary: 'Remove a decommissioned node that holds no live attempt',
    description:
      'The node then counts nowhere (listings, cluster summary, rack-partition shares, placement). Its events go with it. A node that beats again afterwards is registered anew, as a new node.',
  })
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiResponse({ status: 404, description: 'No such node' })
  @ApiResponse({ status: 409, description: 'The node holds live attempts' })
  @ApiResponse({ status: 401, description: 'Missing, unknown, expired or revoked token' })
  @ApiResponse({ status: 403, description: 'Not an operator' })
  @ApiResponse({ status: 429, description: "The token's request budget is spent (Retry-After)" })
  async remove(@Param('id') id: string, @CurrentPrincipal() who: Principal): Promise<void> {
    await this.nodes.remove(id, who);
  }

  @Post('enrollments')
  @HttpCode(201)
  @Roles('operator')
  @ApiOperation({ summary: 'Enroll up to 1,000 nodes at once, or enroll them again (rotation); a simulated fleet enrolls itself this way' })
  @ApiCreatedResponse({ type: NodeEnrollmentsView })
  async enrollMany(@Body() dto: NodeIdsDto, @CurrentPrincipal() who: Principal): Promise<NodeEnrollmentsView> {
    const items = (await this.enrollment.enroll(dto.nodeIds, who, dto.inventory)).map(({ nodeId, credential }) => ({ nodeId, credential }));
    return { items, kafka: this.enrollment.agentKafka(), commandPublicKey: this.enrollment.commandPublicKey };
  }

  @Post(':id/enrollment')
  @HttpCode(201)
  @Roles('operator')
  @ApiOperation({
    summary: 'Enroll a node, or enroll it again: everything its agent needs, the credential shown once (the old one stops working)',
    description:
      'The body is optional; its `inventory` is pinned (ADR 0035): placement never believes more of the node than that, whatever it reports. Without one the pinned inventory stays, or the first the node reports is pinned',
  })
  @ApiCreatedResponse({ type: NodeEnrollmentView })
  async enroll(@Param('id') id: string, @Body() body: EnrollNodeDto, @CurrentPrincipal() who: Principal): Promise<NodeEnrollmentView> {
    const [{ nodeId, credential, generation }] = await this.enrollment.enroll([id], who, body?.inventory);
    return { nodeId, credential, kafka: this.enrollment.agentKafka({ nodeId, generation }), commandPublicKey: this.enrollment.commandPublicKey };
  }

  @Delete(':id/enrollment')
  @HttpCode(204)
  @Roles('operator')
  @ApiOperation({
    summary:
      'Revoke a node: from then on nothing it sends changes anything, its Kafka principal loses its command group at once and its connections end with its last token',
  })
  @ApiNoContentResponse()
  async revokeEnrollment(@Param('id') id: string, @CurrentPrincipal() who: Principal): Promise<void> {
    await this.enrollment.revoke(id, who);
  }
}
