// The simulation's agenda: what happens next, in time order, then in the order it was scheduled.

export interface Event {
  readonly time: number
  readonly seq: number
  readonly run: () => void
  cancelled: boolean
}

// A binary heap of events by time, then by the order they were scheduled in.
export class Agenda {
  private readonly heap: Array<Event> = []
  private seq = 0

  push(time: number, run: () => void): Event {
    const event: Event = { time, seq: this.seq++, run, cancelled: false }
    const heap = this.heap
    heap.push(event)
    let i = heap.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!before(heap[i]!, heap[parent]!)) break
      ;[heap[i], heap[parent]] = [heap[parent]!, heap[i]!]
      i = parent
    }
    return event
  }

  peek(): Event | undefined {
    while (this.heap.length > 0 && this.heap[0]!.cancelled) this.pop()
    return this.heap[0]
  }

  pop(): Event | undefined {
    const heap = this.heap
    const top = heap[0]
    const last = heap.pop()
    if (heap.length > 0 && last !== undefined) {
      heap[0] = last
      let i = 0
      for (;;) {
        const left = 2 * i + 1
        const right = left + 1
        let smallest = i
        if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left
        if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right
        if (smallest === i) break
        ;[heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!]
        i = smallest
      }
    }
    return top
  }
}

const before = (a: Event, b: Event) => a.time < b.time || (a.time === b.time && a.seq < b.seq)
