// `import ListSync` gives sync (sources, cursors, replicas, replica sets, the observable models)
// and everything `import ListStore` gives: an app that syncs needs no other import.
@_exported import ListStore
