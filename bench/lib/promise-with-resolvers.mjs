// PostGraphile 5 uses Promise.withResolvers (Node 22); on Node 20 it is loaded first with --import.
if (typeof Promise.withResolvers !== 'function') {
  Promise.withResolvers = function withResolvers () {
    let resolve, reject
    const promise = new this((res, rej) => { resolve = res; reject = rej })
    return { promise, resolve, reject }
  }
}
