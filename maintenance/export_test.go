package maintenance

var DVKey = dvKey
