/**
 * The pages of an app's UI, rendered from its status: Jobs (with an event timeline), a job (its DAG and stages),
 * Stages, a stage (its DAG, summary quantiles, a timeline and its tasks, paged and sorted here on the server),
 * Storage and a persisted dataset, Environment and Executors. A live app's UI and (later) the history server's
 * replay of an event log serve the same pages. They are drawn in `internal/`: the jobs pages, the stages pages, the
 * storage, environment and executors pages, and the chrome they share.
 *
 * @since 0.1.0
 */
import * as JobPages from "./internal/appJobPages.js"
import * as ResourcePages from "./internal/appResourcePages.js"
import * as StagePages from "./internal/appStagePages.js"

/**
 * What the UI knows of the app besides its events.
 *
 * @since 0.1.0
 * @category models
 */
export interface AppDescription {
  readonly name: string
  readonly master: string
  readonly user: string
  readonly startTime: number
  /** Where the UI's pages are, which their links are relative to: `/` live, `/history/<appId>/` in the history server. */
  readonly uiRoot?: string
  /**
   * Whether the pages update as the app goes on, and the badge they wear then: `live` when not given (the app's own
   * UI); the history server's pages of a log still incomplete follow it (`incomplete`), those of a finished app's
   * are static.
   */
  readonly liveBadge?: () => string | undefined
}

/**
 * Which page of a stage's tasks to show, of how many, sorted by which column (`-` first for descending).
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskPaging {
  readonly page?: number | undefined
  readonly pageSize?: number | undefined
  readonly sort?: string | undefined
}

/**
 * @since 0.1.0
 * @category pages
 */
export const jobsPage = JobPages.jobsPage

/**
 * @since 0.1.0
 * @category pages
 */
export const stagesPage = StagePages.stagesPage

/**
 * @since 0.1.0
 * @category pages
 */
export const jobPage = JobPages.jobPage

/**
 * A page of a stage attempt's tasks, sorted by a column (`taskColumns` key, `-` first for descending).
 *
 * @since 0.1.0
 */
export const taskPage = StagePages.taskPage

/**
 * @since 0.1.0
 * @category pages
 */
export const stagePage = StagePages.stagePage

/**
 * @since 0.1.0
 * @category pages
 */
export const storagePage = ResourcePages.storagePage

/**
 * @since 0.1.0
 * @category pages
 */
export const datasetPage = ResourcePages.datasetPage

/**
 * @since 0.1.0
 * @category pages
 */
export const environmentPage = ResourcePages.environmentPage

/**
 * @since 0.1.0
 * @category pages
 */
export const executorsPage = ResourcePages.executorsPage
