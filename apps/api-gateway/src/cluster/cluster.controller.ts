import { Controller, Get, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ClusterHeatmapView, ClusterSummaryView, CommandKeyView } from '@gantry/contracts';
import { BearerAuthGuard } from '../auth/bearer-auth.guard';
import { EnrollmentService } from '../enrollment/enrollment.service';
import { ClusterHeatmapService } from './cluster-heatmap.service';
import { ClusterSummaryService } from './cluster-summary.service';

@ApiTags('cluster')
@ApiBearerAuth()
@UseGuards(BearerAuthGuard)
@Controller('v1/cluster')
export class ClusterController {
  constructor(
    private readonly summaries: ClusterSummaryService,
    private readonly enrollment: EnrollmentService,
    private readonly heatmaps: ClusterHeatmapService,
  ) {}

  @Get('summary')
  @ApiOkResponse({
    type: ClusterSummaryView,
    description: 'Node counts by health, GPU capacity by model, utilisation averages and job counts; capacity and job counts may be up to a second old',
  })
  async summary(): Promise<ClusterSummaryView> {
    return this.summaries.summary();
  }

  @Get('heatmap')
  @ApiOperation({ summary: 'Every node in one compact answer (health, GPUs, utilisation), by zone and rack: what a fleet heatmap draws' })
  @ApiOkResponse({ type: ClusterHeatmapView, description: 'Columnar: entry i of each per-node array is node i. At most a second old.' })
  async heatmap(): Promise<ClusterHeatmapView> {
    return this.heatmaps.heatmap();
  }

  @Get('command-key')
  @ApiOperation({ summary: "The control plane's command-signing public key: agents carry out only what it signed" })
  @ApiOkResponse({ type: CommandKeyView })
  commandKey(): CommandKeyView {
    return { publicKey: this.enrollment.commandPublicKey };
  }
}
