// A driver that runs for the given number of seconds (default 60): something to watch and to kill.
export default async ([seconds = "60"]) => {
  await new Promise((resolve) => setTimeout(resolve, Number(seconds) * 1000))
}
