import { CreateCoreTables1764410000000 } from './1764410000000-CreateCoreTables';
import { AddTokensQueuesIdempotencyKeys1764420000000 } from './1764420000000-AddTokensQueuesIdempotencyKeys';
import { AddLeaderLeases1764430000000 } from './1764430000000-AddLeaderLeases';
import { IndexQueuedJobsByQueue1764440000000 } from './1764440000000-IndexQueuedJobsByQueue';
import { AddQueueWeight1764450000000 } from './1764450000000-AddQueueWeight';
import { AddNodeEvents1764460000000 } from './1764460000000-AddNodeEvents';
import { IndexActiveJobsByQueue1764470000000 } from './1764470000000-IndexActiveJobsByQueue';
import { TrackNodeChanges1764480000000 } from './1764480000000-TrackNodeChanges';
import { AddNodeEnrollments1764490000000 } from './1764490000000-AddNodeEnrollments';
import { AddGatewayLifecycles1764500000000 } from './1764500000000-AddGatewayLifecycles';
import { AddJobEventStream1764510000000 } from './1764510000000-AddJobEventStream';
import { AddGpuDevicesAndDeadlines1764520000000 } from './1764520000000-AddGpuDevicesAndDeadlines';
import { AddRetryPolicy1796211464196 } from './1796211464196-AddRetryPolicy';
import { AddJobDependencies1796212057080 } from './1796212057080-AddJobDependencies';
import { AddNodeDrain1796213191289 } from './1796213191289-AddNodeDrain';
import { AddJobArrays1796214808627 } from './1796214808627-AddJobArrays';
import { AddPreemption1796214842824 } from './1796214842824-AddPreemption';
import { AddNodeLogsPort1796211528395 } from './1796211528395-AddNodeLogsPort';
import { AddDeclaredInventoryAndStartFailures1796215600000 } from './1796215600000-AddDeclaredInventoryAndStartFailures';
import { AddQueueHostIpc1796300000000 } from './1796300000000-AddQueueHostIpc';
import { AddFairShareUsage1796400000000 } from './1796400000000-AddFairShareUsage';
import { AddUsageLedger1796410000000 } from './1796410000000-AddUsageLedger';
import { AddQueueOwnerWeights1796420000000 } from './1796420000000-AddQueueOwnerWeights';
import { AddQueueHierarchy1796430000000 } from './1796430000000-AddQueueHierarchy';
import { AddRankQueueAndOwner1796440000000 } from './1796440000000-AddRankQueueAndOwner';

/** Every migration, in order. A new one is added here as well as in its own file. */
export const MIGRATIONS = [
  CreateCoreTables1764410000000,
  AddTokensQueuesIdempotencyKeys1764420000000,
  AddLeaderLeases1764430000000,
  IndexQueuedJobsByQueue1764440000000,
  AddQueueWeight1764450000000,
  AddNodeEvents1764460000000,
  IndexActiveJobsByQueue1764470000000,
  TrackNodeChanges1764480000000,
  AddNodeEnrollments1764490000000,
  AddGatewayLifecycles1764500000000,
  AddJobEventStream1764510000000,
  AddGpuDevicesAndDeadlines1764520000000,
  AddRetryPolicy1796211464196,
  AddNodeLogsPort1796211528395,
  AddJobDependencies1796212057080,
  AddNodeDrain1796213191289,
  AddJobArrays1796214808627,
  AddPreemption1796214842824,
  AddDeclaredInventoryAndStartFailures1796215600000,
  AddQueueHostIpc1796300000000,
  AddFairShareUsage1796400000000,
  AddUsageLedger1796410000000,
  AddQueueOwnerWeights1796420000000,
  AddQueueHierarchy1796430000000,
  AddRankQueueAndOwner1796440000000,
];
