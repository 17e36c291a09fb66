this.Foo = 1;
var Bar = 2;
