import { Controller, Get, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ClusterSummaryView } from '@gantry/contracts';
import { BearerAuthGuard } from '../auth/bearer-auth.guard';
import { ClusterSummaryService } from './cluster-summary.service';

@ApiTags('cluster')
@ApiBearerAuth()
@UseGuards(BearerAuthGuard)
@Controller('v1/cluster')
export class ClusterController {
  constructor(private readonly summaries: ClusterSummaryService) {}

  @Get('summary')
  @ApiOkResponse({ type: ClusterSummaryView, description: 'Node counts by health, GPU capacity by model, utilisation averages and job counts; capacity and job counts may be up to a second old' })
  async summary(): Promise<ClusterSummaryView> {
    return this.summaries.summary();
  }
}
