const a = 1;
export { a }
