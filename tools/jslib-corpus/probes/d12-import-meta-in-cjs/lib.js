exports.url = import.meta.url;
