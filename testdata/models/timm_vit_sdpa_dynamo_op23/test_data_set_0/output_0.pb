
BlogitsJ(AŸ>Š.C½D–ù½žÆh>8Rs½Î‘r>…ÜF¾~ù‰½`")=Bì•=