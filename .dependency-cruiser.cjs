/**
 * Import direction for src/ (`npm run check:imports`, run in CI by .ci/run).
 *
 * Layers, bottom to top — a module may import its own layer and the ones below, never above:
 *
 *   base       JsonRpc, McpSchema, internal/mcpSchema/, McpError, McpErrorSchema, Telemetry
 *   transport  Transport and the transports (Stdio, Memory, StreamableHttp, LegacySse,
 *              WebSocket, HttpClientUndici), HttpWire, Launcher, NodeFleet, internal/transport/
 *   peer       Peer, internal/peer/
 *   client     McpClient, internal/mcpClient/, Host, NodeHost, internal/host/
 *   auth       OAuth, NodeOAuth, ResourceServer, internal/oauth/ (the authorization client, which transports'
 *              owners use, and the resource server, which McpServer's HTTP serving uses)
 *   server     McpServer, NodeMcpServer, internal/mcpServer/ (the server side: sessions, handlers,
 *              items, HTTP: a neutral core, its Web adapter, and the node:http one for NodeMcpServer)
 *   fleet      ServerSpec, ServerState, RegistryEvent, Catalog, ToolPins, CatalogCache, ServerRegistry,
 *              internal/serverRegistry/, internal/toolPins/, internal/catalogCache/
 *              (ServerSpec.connect → transports is downward)
 *   config     FleetConfig, ConfigTrust, Policy, internal/policy/, internal/fleetConfig/
 *   edge       Gateway, NodeGateway, internal/gateway/, Dashboard, NodeDashboard, internal/dashboard/, McpManagementTools,
 *              internal/mcpManagementTools/, ToolSearch, internal/toolSearch/, Embedder, NodeEmbedder, FleetTools, AiToolkit, AiSdk, cli/, index.ts (the package's
 *              barrel), node/, ai/ and ai-sdk/ (the barrels of mcp-fleet, mcp-fleet/node, mcp-fleet/ai
 *              and mcp-fleet/ai-sdk), cluster/ and internal/cluster/ (mcp-fleet/cluster: Node, and the
 *              only importers of @effect/cluster, @effect/rpc, @effect/sql and @effect/sql-pg)
 *
 * Beside them: src/testing/ (the public test kit) may use anything below the fleet and is used
 * by no library module; src/internal/*.ts (traced, reveal, jsonSchema, …) are shared leaves that
 * anyone may import and that import nothing above base.
 *
 * The optional peer dependencies stay in their own modules: only AiToolkit imports @effect/ai and
 * only AiSdk imports ai, and only their own barrels import those two, so the main entry loads
 * without either installed.
 *
 * Neutral and Node: the main entry runs on any Web-standard runtime (scripts/check-neutral.mjs
 * bundles it and fails on any Node built-in); what needs Node (NODE below) is reached only from
 * mcp-fleet/node (src/node/), the CLI and the other Node modules.
 *
 * Also: internal/<owner>/ is private to its owner's public module(s) and its own siblings; src
 * never imports test/, bench/, examples/ or scripts/; no import cycles, except type-only ones
 * between a public module and its own internal implementation (Effect's own pattern: the
 * internal file imports the public module's types, the public module imports its values); and
 * every src module belongs to a layer — a new one is added to LAYERS below (and to
 * ARCHITECTURE.md).
 */

/** Each layer's modules, as regular expressions over paths relative to the repository root. */
const LAYERS = [
  ["base", ["^src/(JsonRpc|McpSchema|McpError|McpErrorSchema|Telemetry)\\.ts$", "^src/internal/mcpSchema/"]],
  [
    "transport",
    [
      "^src/(Transport|Stdio|Memory|StreamableHttp|LegacySse|WebSocket|HttpClientUndici|HttpWire|Launcher|NodeFleet)\\.ts$",
      "^src/internal/transport/"
    ]
  ],
  ["peer", ["^src/Peer\\.ts$", "^src/internal/peer/"]],
  ["client", ["^src/(McpClient|Host|NodeHost)\\.ts$", "^src/internal/(mcpClient|host)/"]],
  ["auth", ["^src/(OAuth|NodeOAuth|ResourceServer)\\.ts$", "^src/internal/oauth/"]],
  ["server", ["^src/(McpServer|NodeMcpServer)\\.ts$", "^src/internal/mcpServer/"]],
  [
    "fleet",
    [
      "^src/(ServerSpec|ServerState|RegistryEvent|Catalog|ToolPins|CatalogCache|ServerRegistry)\\.ts$",
      "^src/internal/(serverRegistry|toolPins|catalogCache)/"
    ]
  ],
  ["config", ["^src/(FleetConfig|ConfigTrust|Policy)\\.ts$", "^src/internal/(policy|fleetConfig)/"]],
  [
    "edge",
    [
      "^src/(Gateway|NodeGateway|McpManagementTools|FleetTools|AiToolkit|AiSdk|Dashboard|NodeDashboard|ToolSearch|Embedder|NodeEmbedder)\\.ts$",
      "^src/internal/(gateway|mcpManagementTools|dashboard|toolSearch)/",
      "^src/cli/",
      "^src/index\\.ts$",
      "^src/node/",
      "^src/(ai|ai-sdk)/",
      "^src/cluster/",
      "^src/internal/cluster/"
    ]
  ]
]

/** Who owns each internal/<owner>/ folder: the only modules outside it that may import it. */
const OWNERS = {
  mcpSchema: "^src/McpSchema\\.ts$",
  transport: "^src/(Transport|Stdio|Memory|StreamableHttp|LegacySse|WebSocket|HttpClientUndici)\\.ts$",
  peer: "^src/Peer\\.ts$",
  mcpClient: "^src/McpClient\\.ts$",
  host: "^src/Host\\.ts$",
  mcpServer: "^src/(McpServer|NodeMcpServer)\\.ts$",
  oauth: "^src/(OAuth|NodeOAuth|ResourceServer)\\.ts$",
  serverRegistry: "^src/ServerRegistry\\.ts$",
  toolPins: "^src/ToolPins\\.ts$",
  catalogCache: "^src/CatalogCache\\.ts$",
  policy: "^src/Policy\\.ts$",
  fleetConfig: "^src/FleetConfig\\.ts$",
  gateway: "^src/Gateway\\.ts$",
  mcpManagementTools: "^src/McpManagementTools\\.ts$",
  dashboard: "^src/Dashboard\\.ts$",
  toolSearch: "^src/(ToolSearch|NodeEmbedder)\\.ts$",
  cluster: "^src/cluster/ClusterRegistry\\.ts$"
}

/** The cluster's modules (mcp-fleet/cluster), the only ones that import its optional peers. */
const CLUSTER = "^src/(cluster/ClusterRegistry\\.ts|internal/cluster/)"

/** Each optional peer dependency, and the only modules that may import it (and their barrels). */
const OPTIONAL_PEERS = {
  "@effect/ai": ["^src/AiToolkit\\.ts$", "^src/ai/"],
  ai: ["^src/AiSdk\\.ts$", "^src/ai-sdk/"],
  "@effect/cluster": [CLUSTER, "^src/cluster/index\\.ts$"],
  "@effect/rpc": [CLUSTER, "^src/cluster/index\\.ts$"],
  "@effect/sql": [CLUSTER, "^src/cluster/index\\.ts$"],
  "@effect/sql-pg": [CLUSTER, "^src/cluster/index\\.ts$"]
}

/** The Node modules: only mcp-fleet/node, the CLI and each other import them, never the neutral core. */
const NODE = [
  "^src/(Stdio|WebSocket|HttpClientUndici|NodeFleet|NodeHost|NodeMcpServer|NodeGateway|NodeOAuth|NodeDashboard|NodeEmbedder)\\.ts$",
  "^src/internal/transport/(guardian|processGroup|processScan|undiciWire)\\.ts$",
  "^src/internal/oauth/(fileStore|loopback)\\.ts$",
  "^src/node/",
  "^src/cluster/",
  "^src/internal/cluster/"
]

const TESTING = "^src/testing/"
const LEAVES = "^src/internal/[^/]+\\.ts$"
const PUBLIC = "^src/[^/]+\\.ts$"

const layerRules = LAYERS.slice(0, -1).map(([name, paths], i) => ({
  name: `layer-${name}`,
  severity: "error",
  comment:
    `The ${name} layer imports only its own layer and the ones below it (see .dependency-cruiser.cjs, ARCHITECTURE.md).`,
  from: { path: paths },
  to: { path: LAYERS.slice(i + 1).flatMap(([, p]) => p) }
}))

const ownerRules = Object.entries(OWNERS).map(([owner, ownerPath]) => ({
  name: `internal-${owner}-is-private`,
  severity: "error",
  comment: `src/internal/${owner}/ is imported only by its owner (${ownerPath}) and its own siblings.`,
  from: { path: "^", pathNot: [ownerPath, `^src/internal/${owner}/`] },
  to: { path: `^src/internal/${owner}/` }
}))

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: "layer-testing",
      severity: "error",
      comment: "src/testing/ (the public test kit) may use anything below the fleet, nothing from the fleet up.",
      from: { path: TESTING },
      to: { path: LAYERS.slice(LAYERS.findIndex(([name]) => name === "fleet")).flatMap(([, p]) => p) }
    },
    {
      name: "testing-is-not-library",
      severity: "error",
      comment: "No library module imports the test kit (src/testing/); tests and apps do.",
      from: { path: "^src/", pathNot: TESTING },
      to: { path: TESTING }
    },
    {
      name: "leaves-stay-leaves",
      severity: "error",
      comment: "The shared leaves src/internal/*.ts import nothing above base (and each other).",
      from: { path: LEAVES },
      to: { path: "^src/", pathNot: [LEAVES, ...LAYERS[0][1]] }
    },
    ...ownerRules,
    {
      name: "neutral-not-to-node",
      severity: "error",
      comment:
        "The neutral core never imports a Node module; the Node side goes in a Node… module behind mcp-fleet/node.",
      from: { path: "^src/", pathNot: [...NODE, "^src/cli/"] },
      to: { path: NODE }
    },
    ...Object.entries(OPTIONAL_PEERS).flatMap(([peer, modules]) => [
      {
        name: `optional-peer-${peer}`,
        severity: "error",
        comment: `${peer} is an optional peer dependency: only ${modules[0]} imports it.`,
        from: { path: "^src/", pathNot: modules[0] },
        to: { path: `(^|/)node_modules/${peer}/` }
      },
      {
        name: `optional-peer-${peer}-module`,
        severity: "error",
        comment: `Only its barrel (${modules[1]}) imports the module that needs ${peer}, so the main entry does not.`,
        from: { path: "^src/", pathNot: modules },
        to: { path: modules[0] }
      }
    ]),
    {
      name: "internal-unknown-owner",
      severity: "error",
      comment:
        "A new internal/<owner>/ folder: add its owner to OWNERS and its layer to LAYERS in .dependency-cruiser.cjs.",
      from: {},
      to: { path: `^src/internal/(?!(${Object.keys(OWNERS).join("|")})/)[^/]+/` }
    },
    {
      name: "unlayered-module",
      severity: "error",
      comment:
        "Every src module belongs to a layer: add this one to LAYERS in .dependency-cruiser.cjs (and to ARCHITECTURE.md).",
      from: { path: "^src/" },
      to: { path: "^src/", pathNot: [...LAYERS.flatMap(([, p]) => p), TESTING, LEAVES] }
    },
    {
      name: "src-not-to-outside",
      severity: "error",
      comment: "src/ never imports tests, benchmarks, examples or scripts.",
      from: { path: "^src/" },
      to: { path: "^(test|bench|examples|scripts|conformance|tools)/" }
    },
    {
      name: "no-runtime-cycle",
      severity: "error",
      comment: "No import cycle made of value imports (a type-only edge is erased at run time).",
      from: { path: "^src/" },
      to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } }
    },
    {
      name: "no-cycle-between-public-modules",
      severity: "error",
      comment: "Even a type-only cycle is allowed only between a public module and its own internal implementation.",
      from: { path: PUBLIC },
      to: { path: PUBLIC, circular: true }
    },
    {
      name: "not-to-unresolvable",
      severity: "error",
      comment: "An import that resolves to nothing.",
      from: {},
      to: { couldNotResolve: true }
    }
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Type-only imports count: a lower layer must not even name a higher layer's types.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    reporterOptions: {
      dot: { collapsePattern: "^src/(internal/[^/]+|cli|testing)/" },
      text: { highlightFocused: true }
    }
  }
}
