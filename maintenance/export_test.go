package maintenance

var (
	DVKey     = dvKey
	Z85Decode = z85Decode
)
