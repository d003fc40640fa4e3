module semaphoreleak

go 1.22
