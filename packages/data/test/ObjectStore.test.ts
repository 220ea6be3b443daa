import { assert, describe, it } from "@effect/vitest"
import { ObjectStore } from "@kindling/data"

describe("ObjectStore.settingsOf", () => {
  it("reads Hadoop's keys first, then AWS's variables of the environment it is handed", () => {
    const environment = {
      AWS_ENDPOINT_URL: "http://generic:9000",
      AWS_REGION: "eu-west-3",
      AWS_ACCESS_KEY_ID: "from-environment",
      AWS_SECRET_ACCESS_KEY: "secret-from-environment"
    }
    assert.deepStrictEqual(
      ObjectStore.settingsOf({
        "kindling.hadoop.fs.s3a.endpoint": "http://store:8333",
        "kindling.hadoop.fs.s3a.access.key": "from-conf"
      }, environment),
      {
        endpoint: "http://store:8333",
        region: "eu-west-3",
        accessKeyId: "from-conf",
        secretAccessKey: "secret-from-environment",
        sessionToken: undefined,
        pathStyle: true
      }
    )
    // S3's own variable wins over the generic one; a region falls back to AWS_DEFAULT_REGION.
    assert.deepStrictEqual(
      ObjectStore.settingsOf({}, {
        AWS_ENDPOINT_URL: "http://generic:9000",
        AWS_ENDPOINT_URL_S3: "http://s3-only:9000",
        AWS_DEFAULT_REGION: "ap-south-1",
        AWS_S3_FORCE_PATH_STYLE: "false"
      }),
      {
        endpoint: "http://s3-only:9000",
        region: "ap-south-1",
        accessKeyId: undefined,
        secretAccessKey: undefined,
        sessionToken: undefined,
        pathStyle: false
      }
    )
  })

  it("is AWS's defaults when nothing is said: no endpoint, us-east-1, buckets as host names", () => {
    assert.deepStrictEqual(ObjectStore.settingsOf({}), {
      endpoint: undefined,
      region: "us-east-1",
      accessKeyId: undefined,
      secretAccessKey: undefined,
      sessionToken: undefined,
      pathStyle: false
    })
  })
})
