/**
 * The layout of the directories one role makes and another cleans up.
 *
 * @since 0.1.0
 */

/**
 * The directory of an executor's shuffle files and spills, inside its working directory. The executor removes it
 * when it stops; its worker removes it when the executor's process has ended, however it ended.
 *
 * @since 0.1.0
 * @category constants
 */
export const blockManagerDirName = "blockmgr"
