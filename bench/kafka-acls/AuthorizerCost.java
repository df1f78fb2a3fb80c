// What one authorization costs Kafka's StandardAuthorizer (KRaft) with the ACLs per-node principals
// bring (ADR 0034): a literal group ACL for each node, and topic grants either one literal ACL per
// node or one for User:*. Run: npm run bench:kafka-acls (the broker's own jars, no broker needed).
import java.net.InetAddress;
import java.util.*;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.*;
import org.apache.kafka.common.resource.*;
import org.apache.kafka.common.security.auth.*;
import org.apache.kafka.metadata.authorizer.*;
import org.apache.kafka.server.authorizer.*;

public class AuthorizerCost {
  static AuthorizableRequestContext as(String principal) throws Exception {
    InetAddress addr = InetAddress.getByName("10.0.0.1");
    KafkaPrincipal p = new KafkaPrincipal("User", principal);
    return new AuthorizableRequestContext() {
      public String listenerName() { return "CLIENT"; }
      public SecurityProtocol securityProtocol() { return SecurityProtocol.SASL_PLAINTEXT; }
      public KafkaPrincipal principal() { return p; }
      public InetAddress clientAddress() { return addr; }
      public int requestType() { return 0; }
      public int requestVersion() { return 9; }
      public String clientId() { return "agent"; }
      public int correlationId() { return 1; }
    };
  }

  static StandardAuthorizer authorizer(int nodes, boolean literalTopicGrants) {
    StandardAuthorizer a = new StandardAuthorizer();
    a.configure(Map.of("super.users", "User:gantry-admin", "allow.everyone.if.no.acl.found", "false"));
    Map<Uuid, StandardAcl> acls = new HashMap<>();
    String[] roles = {"gateway", "scheduler", "ingester", "reconciler", "fleet"};
    for (String r : roles) {
      acls.put(Uuid.randomUuid(), new StandardAcl(ResourceType.TOPIC, "gantry.heartbeats.v1", PatternType.LITERAL, "User:gantry-" + r, "*", AclOperation.READ, AclPermissionType.ALLOW));
      acls.put(Uuid.randomUuid(), new StandardAcl(ResourceType.GROUP, "gantry-" + r, PatternType.PREFIXED, "User:gantry-" + r, "*", AclOperation.READ, AclPermissionType.ALLOW));
    }
    for (int i = 0; i < nodes; i++) {
      String principal = "User:gantry-node-gpu-" + i + ".g1";
      acls.put(Uuid.randomUuid(), new StandardAcl(ResourceType.GROUP, "gantry-node-gpu-" + i, PatternType.LITERAL, principal, "*", AclOperation.READ, AclPermissionType.ALLOW));
      if (literalTopicGrants) {
        acls.put(Uuid.randomUuid(), new StandardAcl(ResourceType.TOPIC, "gantry.heartbeats.v1", PatternType.LITERAL, principal, "*", AclOperation.WRITE, AclPermissionType.ALLOW));
        acls.put(Uuid.randomUuid(), new StandardAcl(ResourceType.TOPIC, "gantry.agent-commands.v1", PatternType.LITERAL, principal, "*", AclOperation.READ, AclPermissionType.ALLOW));
      }
    }
    if (!literalTopicGrants) {
      acls.put(Uuid.randomUuid(), new StandardAcl(ResourceType.TOPIC, "gantry.heartbeats.v1", PatternType.LITERAL, "User:*", "*", AclOperation.WRITE, AclPermissionType.ALLOW));
      acls.put(Uuid.randomUuid(), new StandardAcl(ResourceType.TOPIC, "gantry.agent-commands.v1", PatternType.LITERAL, "User:*", "*", AclOperation.READ, AclPermissionType.ALLOW));
    }
    a.loadSnapshot(acls);
    a.completeInitialLoad();
    return a;
  }

  /** Mean ns per authorize() call of one action: calls for about a second, after one of warm-up. */
  static double nsPerCall(StandardAuthorizer a, AuthorizableRequestContext ctx, Action action, AuthorizationResult expected) {
    List<Action> actions = List.of(action);
    if (a.authorize(ctx, actions).get(0) != expected) throw new IllegalStateException("unexpected result for " + action);
    double ns = 0;
    for (int round = 0; round < 2; round++) {
      long t0 = System.nanoTime(), n = 0;
      while (System.nanoTime() - t0 < 1_000_000_000L) {
        for (int i = 0; i < 100; i++) a.authorize(ctx, actions);
        n += 100;
      }
      ns = (System.nanoTime() - t0) / (double) n;
    }
    return ns;
  }

  static Action act(ResourceType type, String name, AclOperation op) {
    return new Action(op, new ResourcePattern(type, name, PatternType.LITERAL), 1, false, false);
  }

  public static void main(String[] args) throws Exception {
    int nodes = args.length > 0 ? Integer.parseInt(args[0]) : 50_000;
    int me = nodes / 2;
    AuthorizableRequestContext node = as("gantry-node-gpu-" + me + ".g1");
    Action produce = act(ResourceType.TOPIC, "gantry.heartbeats.v1", AclOperation.WRITE);
    Action fetch = act(ResourceType.TOPIC, "gantry.agent-commands.v1", AclOperation.READ);
    Action ownGroup = act(ResourceType.GROUP, "gantry-node-gpu-" + me, AclOperation.READ);
    Action otherGroup = act(ResourceType.GROUP, "gantry-node-gpu-" + (me + 1), AclOperation.READ);
    System.out.printf("%-44s %12s %12s%n", "authorize() of one action, " + nodes + " nodes", "User:* topic", "per-node topic");
    StandardAuthorizer wildcard = authorizer(nodes, false), literal = authorizer(nodes, true);
    {
      Object[][] rows = {
        {"produce to gantry.heartbeats.v1", produce, AuthorizationResult.ALLOWED},
        {"fetch gantry.agent-commands.v1", fetch, AuthorizationResult.ALLOWED},
        {"join its own group", ownGroup, AuthorizationResult.ALLOWED},
        {"join another node's group (denied)", otherGroup, AuthorizationResult.DENIED},
      };
      for (Object[] r : rows) {
        double w = nsPerCall(wildcard, node, (Action) r[1], (AuthorizationResult) r[2]);
        double l = nsPerCall(literal, node, (Action) r[1], (AuthorizationResult) r[2]);
        System.out.printf("%-44s %9.0f ns %9.0f ns%n", r[0], w, l);
        System.out.flush();
      }
    }
  }
}
