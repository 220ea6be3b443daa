// A master's core driven in this process the way workers and app clients drive it over the wire, for the
// curves that measure the master itself: its schedule pass and its memory after many finished apps.
import { Core } from "@kindling/kernel"
import { MasterCore } from "@kindling/master"
import { AppClientMessages, Descriptions, Endpoints, Ids, RpcAddress, WorkerMessages } from "@kindling/protocol"
import { Option } from "effect"
import { masterOptions } from "../../packages/master/test/fixtures/options.js"

const masterAddress = RpcAddress.make("10.0.0.1", 7077)

const command = new Descriptions.Command({
  mainModule: "@kindling/executor/main",
  arguments: [],
  environment: {},
  nodeOptions: []
})

export class MasterWorld {
  readonly core: MasterCore.State
  private now = 1_700_000_000_000
  private asks = 0
  private connections = 0
  private workers = 0
  private apps = 0
  /** The ids the master gave the apps registered through `registerApp`, in order. */
  readonly appIds: Array<Ids.AppId> = []

  constructor(retainedApplications = 200) {
    this.core = MasterCore.make({
      ...masterOptions(),
      self: Endpoints.ref(masterAddress, Endpoints.master),
      retainedApplications,
      retainedDrivers: 200
    })
    MasterCore.step(this.core, { _tag: "ElectedLeader", stored: { apps: [], drivers: [], workers: [] }, now: this.now })
  }

  private receive(message: MasterCore.Inbound, sender: RpcAddress.RpcAddress) {
    this.now += 1
    const commands = MasterCore.step(this.core, {
      _tag: "Receive",
      message,
      ask: Core.isRequest(message) ? { id: this.asks++, request: message } : undefined,
      sender,
      peer: sender,
      connection: ++this.connections,
      now: this.now
    })
    for (const command of commands) {
      if (command._tag === "Send" && command.message instanceof AppClientMessages.RegisteredApplication) {
        this.appIds.push(command.message.appId)
      }
    }
    return commands
  }

  registerWorker(cores: number, memoryMb: number) {
    const n = this.workers++
    const address = RpcAddress.make(`10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`, 40000)
    return this.receive(
      new WorkerMessages.RegisterWorker({
        id: Ids.WorkerId.make(`worker-${n}`),
        host: address.host,
        port: address.port,
        worker: RpcAddress.endpoint(address, "Worker"),
        cores,
        memory: memoryMb,
        workerWebUiUrl: "",
        masterAddress,
        resources: {}
      }),
      address
    )
  }

  /** An app wanting `maxCores` cores (all it can get when undefined) in executors of `memoryMb`. */
  registerApp(maxCores: number | undefined, memoryMb: number) {
    const n = this.apps++
    const address = RpcAddress.make(`11.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`, 50000)
    return this.receive(
      new AppClientMessages.RegisterApplication({
        appDescription: new Descriptions.ApplicationDescription({
          name: `app ${n}`,
          maxCores: Option.fromNullable(maxCores),
          memoryPerExecutorMB: memoryMb,
          command,
          appUiUrl: "",
          eventLogDir: Option.none(),
          eventLogCodec: Option.none(),
          coresPerExecutor: Option.none(),
          initialExecutorLimit: Option.none(),
          user: "bench",
          resourceReqsPerExecutor: []
        }),
        driver: RpcAddress.endpoint(address, "AppClient")
      }),
      address
    )
  }

  finishApp(appId: Ids.AppId) {
    return this.receive(new AppClientMessages.UnregisterApplication({ appId }), masterAddress)
  }
}
